/// The worker's version, as `push_build_info{version, commit}` and `worker --version` report it. One source:
/// the repository's `VERSION` file, which a test holds this to (and the Dockerfile's `ARG VERSION`), and from
/// which `scripts/release.sh` names its tarball.
public enum BuildInfo {
    public static let version = "0.6.0-dev"
    /// The commit the binary was built from: `scripts/release.sh` writes it into `BuildCommit.swift` of the
    /// tree it builds; a build from a work tree says `unknown`.
    public static var commit: String { buildCommit }
}
