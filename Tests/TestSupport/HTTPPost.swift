import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plain HTTP POST, as a push service's receipt callback makes it: (status, body), or nil when nothing answers.
public func httpPost(_ url: String, headers: [String: String] = [:], body: [UInt8], timeout: TimeInterval = 10) async -> (status: Int, body: String)? {
    guard let target = URL(string: url) else { return nil }
    var request = URLRequest(url: target)
    request.httpMethod = "POST"
    request.timeoutInterval = timeout
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    guard let (data, response) = try? await URLSession.shared.upload(for: request, from: Data(body)),
          let http = response as? HTTPURLResponse else { return nil }
    return (http.statusCode, String(decoding: data, as: UTF8.self))
}
