import FoundationEssentials
import KeychainModel
import KeychainSystem
import SyncProtocol
public import SyncTransport

#if canImport(Glibc)
import Glibc
#endif

/// The sync agent's side of its connection to securityd: each request runs as a task of
/// its own (HTTP with ``AsyncHTTPExchange``; the hint socket with ``SyncHintListener``) and
/// its answer goes back with its id. Returns at the end of the stream (securityd closed it
/// or exited) or at a frame that is not a request.
public final class SyncAgentServer: Sendable {
    private let fd: Int32
    private let http: any SyncHTTPExchange
    private let writing = BlockingMutex(())
    private let hints = BlockingMutex<SyncHintListener?>(nil)
    private let log: @Sendable (String) -> Void

    public init(fd: Int32, http: any SyncHTTPExchange = AsyncHTTPExchange(), log: @escaping @Sendable (String) -> Void) {
        self.fd = fd
        self.http = http
        self.log = log
    }

    /// Serves requests until securityd is gone.
    public func serve() {
        defer { hints.withLock { $0 }?.stop() }
        while true {
            let request: SyncAgentRequest
            do {
                guard let frame = try FrameIO.read(from: fd, maximumSize: SyncAgentWire.maximumFrameSize) else { return }
                var reader = ByteReader(frame)
                request = try SyncAgentWire.decodeRequest(&reader)
            } catch {
                log("securityd's connection failed: \((error as? KeychainError)?.message ?? "\(type(of: error))")")
                return
            }
            switch request {
            case .exchange(let id, let request):
                Task { [http] in
                    do {
                        send(.answered(id, try await http.exchange(request)))
                    } catch {
                        send(.failed(id, error as? KeychainError ?? KeychainError(status: OSStatusCode.notAvailable, message: "the sync server cannot be reached")))
                    }
                }
            case .listen(let url, let authorization):
                let listener = SyncHintListener(url: url, authorization: authorization, log: log) { [weak self] hint in self?.send(.hint(hint)) }
                let previous = hints.withLock { hints in
                    defer { hints = listener }
                    return hints
                }
                previous?.stop()
                listener.start()
            }
        }
    }

    private func send(_ event: SyncAgentEvent) {
        writing.withLock { _ in try? FrameIO.write(SyncAgentWire.encode(event), to: fd) }
    }
}
