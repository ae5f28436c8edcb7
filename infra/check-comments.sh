#!/usr/bin/env bash
# Refuses code comments that cite the service contract by part number ("contract part 14",
# "(contract part 8)", "part 3 of the contract", also wrapped over two comment lines): a comment
# says what the rule is, in words, so that it survives the contract's renumbering and reads
# without the contract at hand. Documentation (docs/*.md) may cite parts; only the `//` comments
# of the `.rs` files under shared/, functions/ and tests/ are checked.
#
# Prints file:line: text for each citation and fails; prints nothing and succeeds otherwise.
# Usage: infra/check-comments.sh            (from anywhere inside the repository; part of infra/test.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# grep picks the few files that mention the contract at all; awk then reads only their comments,
# joining each comment line to the one before it so that "contract" and "part 8" on two lines
# are found too.
candidates=()
while IFS= read -r -d '' file; do
	candidates+=("$file")
done < <(grep -rliZ --include='*.rs' --exclude-dir=target -e 'contract' shared functions tests || true)
((${#candidates[@]})) || exit 0

found="$(awk '
	function cites(text) {
		return text ~ /contract[[:space:]]*[(,:]?[[:space:]]*parts?[[:space:]]+[0-9]/ ||
			text ~ /parts?[[:space:]]+[0-9][0-9.]*[[:space:]]+of[[:space:]]+the[[:space:]]+contract/
	}
	FNR == 1 { previous = ""; previous_line = 0 }
	{
		start = index($0, "//")
		if (start == 0) { previous = ""; next }
		text = $0
		sub(/^[[:space:]]+/, "", text)
		comment = tolower(substr($0, start))
		sub(/^\/\/[\/!]?/, "", comment)
		if (cites(comment)) {
			print FILENAME ":" FNR ": " text
		} else if (previous != "" && !cites(previous) && cites(previous " " comment)) {
			print FILENAME ":" previous_line ": " previous_text
		}
		previous = comment; previous_line = FNR; previous_text = text
	}
' "${candidates[@]}")"

if [[ -n "$found" ]]; then
	printf '%s\n' "$found"
	echo "infra/check-comments.sh: $(printf '%s\n' "$found" | wc -l) comment(s) above cite the contract by part number;" \
		"say what the rule is instead (docs/*.md may keep the citation)" >&2
	exit 1
fi
