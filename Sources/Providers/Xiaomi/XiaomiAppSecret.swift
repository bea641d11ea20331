import Foundation
import PushCore

/// The AppSecret of `Authorization: key=<AppSecret>`, from the app's `app_secret_file`: read once when the
/// app's lanes are made (a MiPush key does not expire; a new one takes a restart, like any configuration),
/// surrounding whitespace and newlines trimmed, as secrets in files are everywhere in the worker.
///
/// A missing, unreadable or empty file is a startup error naming the file. So is a secret with anything but
/// printable ASCII inside (a space, a control character, non-ASCII text): it goes into a header line, where a
/// line break would end the header (and start another), and Xiaomi's secrets are base64 text. Errors never
/// quote the file's content.
enum XiaomiAppSecret {
    /// Files larger than this are not a secret (a path mixed up with another file).
    static let largestFile = 4096

    static func read(file: String) throws(XiaomiSetupError) -> Secret {
        guard !file.isEmpty else { throw XiaomiSetupError("the Xiaomi app secret file is not set (app_secret_file)") }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw XiaomiSetupError("cannot read the Xiaomi app secret file \(file)")
        }
        guard data.count <= largestFile, let text = String(data: data, encoding: .utf8) else {
            throw XiaomiSetupError("the Xiaomi app secret file \(file) does not hold an AppSecret (not UTF-8 text of at most \(largestFile) bytes)")
        }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else { throw XiaomiSetupError("the Xiaomi app secret file \(file) is empty") }
        guard secret.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
            throw XiaomiSetupError("the Xiaomi app secret file \(file) holds a space, a control character or non-ASCII text inside the secret (one word of printable ASCII expected)")
        }
        return Secret(secret)
    }
}
