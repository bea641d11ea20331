import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plain HTTP GET, as a Prometheus scraper or a Kubernetes probe makes it: (status, body), or nil when
/// nothing answers.
public func httpGet(_ url: String, timeout: TimeInterval = 5) async -> (status: Int, body: String)? {
    guard let target = URL(string: url) else { return nil }
    var request = URLRequest(url: target)
    request.timeoutInterval = timeout
    guard let (data, response) = try? await URLSession.shared.data(for: request),
          let http = response as? HTTPURLResponse else { return nil }
    return (http.statusCode, String(decoding: data, as: UTF8.self))
}

/// The value of one sample in Prometheus text (`name{labels} value`), nil if absent. `labels` are the
/// ones the sample must carry, in any order.
public func prometheusSample(_ text: String, _ name: String, _ labels: [String: String] = [:]) -> Double? {
    for line in text.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
        let rest = line.dropFirst(name.count)
        guard rest.first == "{" || rest.first == " " else { continue }
        if !labels.allSatisfy({ rest.contains("\($0.key)=\"\($0.value)\"") }) { continue }
        guard let value = line.split(separator: " ").last, let number = Double(value) else { continue }
        return number
    }
    return nil
}
