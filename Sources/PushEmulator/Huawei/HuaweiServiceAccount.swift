import Foundation

extension EmulatorConfiguration {
    /// A HarmonyOS service account (Push Kit v3): the project it sends for, its key id (the JWT's `kid`), its
    /// `sub_account` (the JWT's `iss`) and the key file (PEM, or the key JSON file with `private_key`).
    public struct HuaweiServiceAccount: Sendable {
        public var projectID: String
        public var keyID: String
        public var subAccount: String
        public var keyFile: String
        public init(projectID: String, keyID: String, subAccount: String, keyFile: String) {
            self.projectID = projectID
            self.keyID = keyID
            self.subAccount = subAccount
            self.keyFile = keyFile
        }

        /// The account of a Huawei service-account key JSON file (`project_id`, `key_id`, `sub_account`,
        /// `private_key`), trusted as it is.
        public init(keyJSONFile path: String) throws {
            guard let data = FileManager.default.contents(atPath: path),
                  let fields = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let project = fields["project_id"] as? String, let keyID = fields["key_id"] as? String,
                  let subAccount = fields["sub_account"] as? String, fields["private_key"] is String
            else {
                throw EmulatorError.configuration("\(path) is not a Huawei service account key file (project_id, key_id, sub_account, private_key)")
            }
            self.init(projectID: project, keyID: keyID, subAccount: subAccount, keyFile: path)
        }
    }
}
