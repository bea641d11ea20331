// Written by scripts/release.sh (and the Dockerfile's COMMIT) in the copy of the tree it builds (the commit of the release); never edited by hand.
let buildCommit = "unknown"
