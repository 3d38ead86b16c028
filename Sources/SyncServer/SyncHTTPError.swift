import Foundation
import Hummingbird
import SyncProtocol

/// An error answered as JSON (``SyncErrorBody``, or ``BatchConflict`` for a refused batch),
/// with the status a client acts on.
struct SyncHTTPError: HTTPResponseError {
    let status: HTTPResponse.Status
    let body: Data

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.body = (try? JSONEncoder().encode(SyncErrorBody(error: code, message: message))) ?? Data()
    }

    init(conflict: BatchConflict) {
        self.status = .conflict
        self.body = (try? JSONEncoder().encode(conflict)) ?? Data()
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// Runs a store call, answering its refusals with their statuses.
    static func mapping<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let conflict as BatchConflict {
            throw SyncHTTPError(conflict: conflict)
        } catch let error as SyncStoreError {
            let status: HTTPResponse.Status =
                switch error.code {
                case .accountExists, .deviceExists, .membershipIndex, .pairingClaimed: .conflict
                case .noSuchAccount, .noSuchDevice, .noSuchPairing: .notFound
                case .tooManyPairings: .tooManyRequests
                case .quotaExceeded: .init(code: 507, reasonPhrase: "Insufficient Storage")
                case .invalid: .badRequest
                default: .internalServerError
                }
            throw SyncHTTPError(status, error.code.description, error.message)
        }
    }
}
