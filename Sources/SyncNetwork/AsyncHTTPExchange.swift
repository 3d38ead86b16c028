import AsyncHTTPClient
import FoundationEssentials
import KeychainModel
import NIOCore
public import SyncTransport

/// HTTP to the sync server with AsyncHTTPClient, in this process: the sync agent's, a
/// benchmark's, a test's. It follows no redirect — a redirect would carry the credential to
/// wherever it pointed; a 3xx is the answer, refused as any unexpected status. (URLSession on
/// Linux was used first: when a connection it reused closed before the answer, it resent the
/// request on a new one without its body and waited out its timeout.)
public struct AsyncHTTPExchange: SyncHTTPExchange {
    public init() {}

    public func exchange(_ request: SyncHTTPRequest) async throws -> SyncHTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = .init(rawValue: request.method)
        outgoing.headers.add(name: "Authorization", value: request.authorization.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
        if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
            outgoing.headers.add(name: "Content-Type", value: "application/json")
        }
        do {
            let response = try await Self.http.execute(outgoing, timeout: Self.timeout)
            let collected = try await response.body.collect(upTo: SyncHTTPResponse.maximumBody)
            return SyncHTTPResponse(status: Int(response.status.code), body: Data(collected.readableBytesView))
        } catch is NIOTooManyBytesError {
            throw KeychainError.decode("the sync server's answer is too long")
        } catch {
            throw KeychainError(status: OSStatusCode.notAvailable, message: "the sync server cannot be reached")
        }
    }

    /// The client every request goes through, on NIO's shared event loops (as the hint
    /// socket); it lives as long as the process.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// The longest a request may take, answer included.
    static let timeout = TimeAmount.seconds(120)
}
