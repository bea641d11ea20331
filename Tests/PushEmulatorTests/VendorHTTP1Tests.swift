import Foundation
@testable import PushEmulator
import TestSupport
import XCTest

/// The vendor listener speaks HTTP/1.1 as well as HTTP/2 (ALPN `http/1.1`, or no ALPN at all): a real HTTP/1.1
/// client (Python's http.client over ssl) sends a token exchange, a Huawei v1 send and a Xiaomi send on one
/// keep-alive connection and gets the same answers as over HTTP/2.
final class VendorHTTP1Tests: XCTestCase {
    static let script = #"""
import http.client, json, ssl, sys, urllib.parse

port, ca, alpn = int(sys.argv[1]), sys.argv[2], sys.argv[3]
context = ssl.create_default_context(cafile=ca)
if alpn != "none":
    context.set_alpn_protocols([alpn])
conn = http.client.HTTPSConnection("127.0.0.1", port, context=context)
results = []

def call(method, path, headers, body):
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read().decode()
    results.append({"status": response.status, "version": response.version, "body": json.loads(data),
                    "local_port": conn.sock.getsockname()[1], "alpn": conn.sock.selected_alpn_protocol()})
    return results[-1]

form = {"Content-Type": "application/x-www-form-urlencoded"}
token = call("POST", "/oauth2/v3/token", form, urllib.parse.urlencode(
    {"grant_type": "client_credentials", "client_id": "104123456", "client_secret": "c2VjcmV0+/="}))["body"]["access_token"]
message = {"message": {"token": ["h1-good", "unregistered-h1"], "data": "x"}}
call("POST", "/v1/104123456/messages:send", {"Content-Type": "application/json", "Authorization": "Bearer " + token},
     json.dumps(message))
call("POST", "/v3/message/regid", dict(form, Authorization="key=mi-secret"), urllib.parse.urlencode(
    {"registration_id": "h1-regid", "restricted_package_name": "com.example.chat", "title": "Alice", "description": "hi"}))
print(json.dumps(results))
"""#

    private var server: EmulatorStandIn!

    override func setUp() async throws {
        server = try await EmulatorStandIn {
            $0.vendorPort = 0
            $0.huawei.apps = [.init(appID: "104123456", clientSecret: "c2VjcmV0+/=")]
            $0.xiaomi.apps = [.init(appSecret: "mi-secret", packages: ["com.example.chat"])]
        }
    }

    override func tearDown() async throws {
        await server?.stop()
    }

    private func run(alpn: String) throws -> [[String: Any]] {
        let directory = makeTemporaryDirectory("http1-client")
        let path = directory + "/client.py"
        try Self.script.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try runCommand(which("python3") ?? "/usr/bin/python3", [path, String(server.emulator.vendorPort), server.caFile, alpn])
        XCTAssertEqual(result.status, 0, result.output)
        let data = Data(result.output.utf8)
        return (try? JSONSerialization.jsonObject(with: data)) as? [[String: Any]] ?? []
    }

    func testHTTP1ClientsGetTheVendorsAnswersOnOneKeepAliveConnection() throws {
        for alpn in ["http/1.1", "none"] {
            let results = try run(alpn: alpn)
            XCTAssertEqual(results.count, 3, "\(alpn): \(results)")
            guard results.count == 3 else { continue }
            XCTAssertEqual(results.map { $0["version"] as? Int }, [11, 11, 11], alpn)
            XCTAssertEqual(Set(results.compactMap { $0["local_port"] as? Int }).count, 1, "\(alpn): one connection for all three")
            XCTAssertEqual(results[0]["alpn"] as? String, alpn == "none" ? nil : "http/1.1")
            XCTAssertEqual(results.map { $0["status"] as? Int }, [200, 200, 200], alpn)
            let huawei = results[1]["body"] as? [String: Any] ?? [:]
            XCTAssertEqual(huawei["code"] as? String, "80100000", "\(huawei)")
            XCTAssertEqual(jsonObject(huawei["msg"] as? String ?? "")["illegal_tokens"] as? [String], ["unregistered-h1"])
            let xiaomi = results[2]["body"] as? [String: Any] ?? [:]
            XCTAssertEqual(xiaomi["code"] as? Int, 0, "\(xiaomi)")
        }
        XCTAssertEqual(server.emulator.huawei.stats.deliveredByToken, ["h1-good": 2])
        XCTAssertEqual(server.emulator.xiaomi.stats.deliveredByToken, ["h1-regid": 2])
    }

    func testHTTP2StillNegotiatesOnTheVendorListener() async throws {
        let client = VendorTestClient(port: server.emulator.vendorPort, caFile: server.caFile)
        let answer = await client.send("/v3/message/regid", headers: [("authorization", "key=mi-secret")],
                                       body: VendorTestClient.form([("registration_id", "h2-regid"), ("title", "a"), ("description", "b")]))
        XCTAssertEqual(answer.body["code"] as? Int, 0, "\(answer.body)")
    }
}
