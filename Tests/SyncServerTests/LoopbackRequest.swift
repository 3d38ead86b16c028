import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request to a server on 127.0.0.1:`port`, as a client would send it (`authorization`
/// as it is: `Bearer …`, `Pairing …`), with a JSON body when given: the status and body.
func loopbackRequest(port: Int, _ method: String, _ path: String, authorization: String?, json: Data?) async throws -> (status: Int, body: Data) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)" + path)!)
    request.httpMethod = method
    if let authorization { request.setValue(authorization, forHTTPHeaderField: "Authorization") }
    if let json {
        request.httpBody = json
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
}
