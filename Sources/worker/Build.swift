import PushCore

/// The commit this binary was built from, as `worker --version` and `push_build_info{commit}` report it.
/// `scripts/release.sh` (the tarball and the image) and the Dockerfile's `COMMIT` write it into
/// `BuildCommit.swift` of the tree they build, which has no `.git`; otherwise a build from a git checkout has it
/// from `Plugins/GitCommit` (`<sha>-dirty` when the sources differ from it); `unknown` when neither knows.
/// Here in the executable, not in PushCore: a new commit recompiles this module alone, not every module that
/// imports PushCore.
enum Build {
    static var commit: String { buildCommit != "unknown" ? buildCommit : gitCommit }
    /// What `worker --version` prints: `0.7.0 (commit 0123abc...)`.
    static var versionLine: String { "\(BuildInfo.version) (commit \(commit))" }
}
