import ProviderKit

/// Push Kit's send paths. The id comes from the configuration (v1's `app_id`) or the key file (v3's `project_id`)
/// and is percent-encoded as one path segment: a slash or a `?` in it must not send the app's messages elsewhere.
enum HuaweiSendPath {
    /// `/v1/<app_id>/messages:send`: Android (HMS Core) and HarmonyOS 3.x/4.x, the OAuth client id in the path.
    static func v1(appID: String) -> String { "/v1/\(TokenEndpoint.formEncode(appID))/messages:send" }

    /// `/v3/<project_id>/messages:send`: HarmonyOS 5+, the key file's project.
    static func v3(projectID: String) -> String { "/v3/\(TokenEndpoint.formEncode(projectID))/messages:send" }
}
