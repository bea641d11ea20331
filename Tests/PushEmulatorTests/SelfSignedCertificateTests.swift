import PushEmulator
import Foundation
import XCTest

final class SelfSignedCertificateTests: XCTestCase {
    /// docker-compose reaches the emulator by its service name: the certificate must name it.
    func testExtraHostNamesAreInTheCertificateAndOddOnesAreRefused() throws {
        let certificate = try SelfSignedCertificate.generate(extraNames: ["push-emulator"])
        let file = NSTemporaryDirectory() + "emulator-\(UUID().uuidString).pem"
        try certificate.certificatePEM.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["x509", "-in", file, "-noout", "-ext", "subjectAltName"]
        let output = Pipe()
        openssl.standardOutput = output
        try openssl.run()
        openssl.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(text.contains("DNS:localhost, DNS:push-emulator, IP Address:127.0.0.1"), text)
        XCTAssertThrowsError(try SelfSignedCertificate.generate(extraNames: ["evil,IP:10.0.0.1"]))
    }
}
