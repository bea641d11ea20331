import Foundation
import PackagePlugin

/// Gives a build from a git checkout its commit: before every build, writes `GitCommit.swift`
/// (`let gitCommit = "<sha>"`) into the plugin's work directory under `.build`, never into the source tree, so
/// git sees no change. The commit gets `-dirty` when what is compiled (Package.swift, Sources, Plugins) differs
/// from it; outside a checkout (a tree exported by `scripts/release.sh`, a Docker build context without `.git`,
/// git missing) it is `unknown`, and the commit written into `BuildCommit.swift` by the release script decides
/// (`Sources/worker/Build.swift`).
///
/// A prebuild command, because only those run at every build (a build command runs when its declared inputs
/// change, and `.git`'s files are no declared input). SwiftPM lets a prebuild command run only an executable
/// that is not built from source: `/bin/sh`, which runs `git` from the caller's PATH. The file is rewritten only
/// when its text changes, so a build of an unchanged commit recompiles nothing.
@main
struct GitCommitPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        var environment: [String: String] = ["PATH": "/usr/local/bin:/usr/bin:/bin"]
        for name in ["PATH", "HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"] {
            if let value = ProcessInfo.processInfo.environment[name] { environment[name] = value }
        }
        return [.prebuildCommand(
            displayName: "Reading the git commit of \(context.package.displayName)",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "git-commit", context.package.directoryURL.path, output.path],
            environment: environment,
            outputFilesDirectory: output
        )]
    }

    /// $1: the package's directory, $2: the output directory. Only a `.git` of the package's own directory
    /// counts: a tree exported inside another checkout (release.sh's `.build-release/src`) must not report that
    /// checkout's commit. `--no-optional-locks`: reading the state never writes git's index, so a build beside
    /// an editor's or another git command's work takes no lock. A changed document or script is no `-dirty`:
    /// the binary is the commit's.
    static let script = #"""
    set -eu
    package="$1"; out="$2"
    commit=unknown
    if [ -e "$package/.git" ] && head=$(git -C "$package" --no-optional-locks rev-parse --verify --quiet 'HEAD^{commit}' 2>/dev/null); then
      commit="$head"
      git -C "$package" --no-optional-locks diff --quiet HEAD -- Package.swift Sources Plugins 2>/dev/null || commit="$head-dirty"
    fi
    mkdir -p "$out"
    text="// Written at each build by Plugins/GitCommit (the commit of the checkout built); never in git.
    let gitCommit = \"$commit\""
    if [ "$(cat "$out/GitCommit.swift" 2>/dev/null || true)" != "$text" ]; then
      printf '%s\n' "$text" > "$out/GitCommit.swift.tmp"
      mv "$out/GitCommit.swift.tmp" "$out/GitCommit.swift"
    fi
    """#
}
