/// The worker's version, as `push_build_info{version}` and `worker --version` report it.
public enum BuildInfo {
    public static let version = "0.5.0"
}
