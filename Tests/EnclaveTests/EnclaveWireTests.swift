import Dispatch
import Enclave
import FoundationEssentials
import Glibc
import KeychainCrypto
import KeychainModel
import Testing

@Suite struct EnclaveWireTests {
    @Test func requestsRoundTrip() throws {
        let requests: [EnclaveRequest] = [
            .status, .lock, .indexKey, .metadataKey(.whenPasscodeSetThisDeviceOnly),
            .unlock(passcode: SecretBytes("1234".utf8)),
            .changePasscode(old: nil, new: SecretBytes("n".utf8)), .changePasscode(old: SecretBytes("o".utf8), new: nil),
            .updateSettings(autoLockSeconds: 300, eraseAfterFailures: nil),
            .wrapItemKey(.afterFirstUnlock, ItemKey.generate(), associatedData: Data("ad".utf8)),
            .unwrapItemKey(.always, wrapped: Data(count: 60), associatedData: Data()),
        ]
        for request in requests {
            let encoded = EnclaveWire.encode(request)
            #expect(EnclaveWire.encode(try EnclaveWire.decodeRequest(encoded)) == encoded)
        }
    }

    @Test func malformedRequestsAreRefused() {
        let valid = EnclaveWire.encode(.unwrapItemKey(.always, wrapped: Data(count: 60), associatedData: Data("x".utf8)))
        for length in 0..<valid.count {
            #expect(throws: KeychainError.decode) { try EnclaveWire.decodeRequest(valid.prefix(length)) }
        }
        #expect(throws: KeychainError.decode) { try EnclaveWire.decodeRequest(valid + Data([0])) }
        #expect(throws: KeychainError.decode) { try EnclaveWire.decodeRequest(Data([2, 1])) }  // version 2
        #expect(throws: KeychainError.decode) { try EnclaveWire.decodeRequest(Data([1, 99])) }  // opcode
        var badClass = Data([1, 7])
        badClass.appendLengthPrefixed(Data("zz".utf8))
        #expect(throws: KeychainError.decode) { try EnclaveWire.decodeRequest(badClass) }
    }

    @Test func errorsCrossTheWireWithTheirStatus() {
        let response = EnclaveWire.failure(KeychainError(status: -25308, message: "locked"))
        do {
            _ = try EnclaveWire.body(of: response)
            Issue.record("expected an error")
        } catch let error as KeychainError {
            #expect(error.status == -25308)
            #expect(error.message == "locked")
        } catch {
            Issue.record("\(error)")
        }
    }

    /// A frame fed one byte at a time arrives whole; an oversized length is refused before
    /// its payload is read; a stream cut mid-frame is an error, a clean end is nil.
    @Test func framesOverASocket() throws {
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]) }
        let payload = Data((0..<64).map { UInt8($0) })  // each 1-byte send costs a socket buffer slot; stay well under the limit
        var frame = Data()
        frame.appendInteger(UInt32(payload.count))
        frame.append(payload)
        for byte in frame {
            #expect(send(fds[1], [byte], 1, 0) == 1)
        }
        #expect(try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) == payload)

        var huge = Data()
        huge.appendInteger(UInt32(EnclaveWire.maximumFrameSize + 1))
        huge.withUnsafeBytes { _ = send(fds[1], $0.baseAddress, $0.count, 0) }
        #expect(throws: KeychainError.decode) { try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) }

        var cut = Data()
        cut.appendInteger(UInt32(10))
        cut.append(Data([1, 2, 3]))
        cut.withUnsafeBytes { _ = send(fds[1], $0.baseAddress, $0.count, 0) }
        close(fds[1])
        #expect(throws: KeychainError.io) { try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) }
        #expect(try FrameIO.read(from: fds[0], maximumSize: EnclaveWire.maximumFrameSize) == nil)
    }

    /// An exchange tells a request the peer never read (safe to send elsewhere: nil) from
    /// one it read before closing (it may have acted on it: errSecIO).
    @Test func exchangeTellsAnUnreadRequestFromALostOne() throws {
        func pair() -> (Int32, Int32) {
            var fds: [Int32] = [-1, -1]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            return (fds[0], fds[1])
        }
        let request = Data("request".utf8)

        let (client, server) = pair()  // the server closes with the request unread
        #expect(send(client, [0, 0, 0, 1, 9], 5, 0) == 5)  // an earlier frame, still queued when it dies
        close(server)
        #expect(try FrameIO.exchange(request, on: client, maximumSize: 100) == nil)
        close(client)

        let (idle, gone) = pair()  // the server was gone before the request
        close(gone)
        #expect(try FrameIO.exchange(request, on: idle, maximumSize: 100) == nil)
        close(idle)

        let (asker, reader) = pair()  // the server reads the request, then closes
        DispatchQueue.global().async {
            _ = try? FrameIO.read(from: reader, maximumSize: 100)
            close(reader)
        }
        #expect(throws: KeychainError.io) { try FrameIO.exchange(request, on: asker, maximumSize: 100) }
        close(asker)

        let (caller, answerer) = pair()  // and a served request gets its answer
        DispatchQueue.global().async {
            if (try? FrameIO.read(from: answerer, maximumSize: 100)) != nil { try? FrameIO.write(Data("answer".utf8), to: answerer) }
            close(answerer)
        }
        #expect(try FrameIO.exchange(request, on: caller, maximumSize: 100) == Data("answer".utf8))
        close(caller)
    }
}
