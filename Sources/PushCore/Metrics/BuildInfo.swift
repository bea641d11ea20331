/// The worker's version, as `push_build_info{version, commit}` and `worker --version` report it. One source:
/// the repository's `VERSION` file, which a test holds this to (and the Dockerfile's `ARG VERSION`), and from
/// which `scripts/release.sh` names its tarball. The commit is the worker executable's (`Sources/worker/Build.swift`).
public enum BuildInfo {
    public static let version = "0.7.0"
}
