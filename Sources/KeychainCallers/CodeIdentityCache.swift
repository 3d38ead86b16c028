import CodeSigning
import FoundationEssentials
import KeychainLogging
import KeychainModel
import KeychainSystem

#if canImport(Glibc)
import Glibc
#endif

/// The code identity of executables, verified once per file: keyed by the file's device,
/// inode, size and modification time (an executable being run cannot be written, and a
/// replaced one is a new inode), and dropped when the trusted roots change.
final class CodeIdentityCache: Sendable {
    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var modifiedNanoseconds: Int64
    }

    private struct State {
        var rootsStamp: [Int64]? = nil
        var verifier = CodeSignatureVerifier(roots: DeveloperRoots([]))
        var identities: [FileKey: CodeIdentity] = [:]
    }

    private let rootDirectories: [String]
    private let state = BlockingMutex(State())
    /// Enough for every program a user runs; past it the cache starts over.
    private static let capacity = 1024

    init(rootDirectories: [String]) {
        self.rootDirectories = rootDirectories
    }

    /// The identity of the executable open at `fd` (opened from /proc/PID/exe, so it is
    /// the file the process runs even when its path now names another).
    func identity(ofExecutable fd: Int32, now: Date = Date()) throws -> CodeIdentity {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.ioError("fstat") }
        let key = FileKey(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: Int64(info.st_mtim.tv_nsec))
        let stamp = DeveloperRoots.stamp(of: rootDirectories)
        let (cached, verifier) = state.withLock { state -> (CodeIdentity?, CodeSignatureVerifier?) in
            if state.rootsStamp != stamp { return (nil, nil) }
            return (state.identities[key], state.verifier)
        }
        let identity: CodeIdentity
        if let cached {
            identity = cached
        } else {
            let verifier = verifier ?? reloadRoots(stamp)
            let size = Int(info.st_size)
            // Most programs carry no signature: their trailer says so without reading them.
            let trailer = CodeSignature.trailer.count
            let tail = size < trailer ? Data() : try Self.read(fd, from: size - trailer, count: trailer)
            if tail != CodeSignature.trailer {
                identity = .unsigned(reason: CodeSignatureVerifier.noSignature)
            } else {
                identity = verifier.verify(executable: try Self.read(fd, from: 0, count: size), at: now)
            }
            state.withLock { state in
                guard state.rootsStamp == stamp else { return }
                if state.identities.count >= Self.capacity { state.identities.removeAll() }
                state.identities[key] = identity
            }
        }
        if case .signed(let code) = identity, now > code.notValidAfter {
            return .unsigned(reason: "the certificate of team \(code.team) expired at \(code.notValidAfter)")
        }
        return identity
    }

    private func reloadRoots(_ stamp: [Int64]) -> CodeSignatureVerifier {
        let (roots, skipped) = DeveloperRoots.load(from: rootDirectories)
        for file in skipped { DaemonLog.logger.warning("\(file) is not a developer root certificate; not trusted") }
        let verifier = CodeSignatureVerifier(roots: roots)
        state.withLock { state in
            state.rootsStamp = stamp
            state.verifier = verifier
            state.identities.removeAll()
        }
        return verifier
    }

    private static func ioError(_ what: String) -> KeychainError {
        SystemCall.ioError("\(what)")
    }

    private static func read(_ fd: Int32, from start: Int, count: Int) throws -> Data {
        var data = Data(count: count)
        var offset = 0
        while offset < count {
            let read = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, count - offset, off_t(start + offset)) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { throw Self.ioError("reading the executable") }
            offset += read
        }
        return data
    }
}
