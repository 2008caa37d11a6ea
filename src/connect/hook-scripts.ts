/**
 * The bash hook scripts `engram connect` writes for clients with session hooks. The
 * agent's URL is baked in; the token never is: it comes from `ENGRAM_TOKEN` at run time.
 * Clients parse a hook's stdout, so stdout carries only JSON and every diagnostic goes
 * to stderr.
 */

export interface SessionStartScript {
  /** The client as people call it, for messages: "Codex". */
  clientTitle: string;
  /** Full URL of the session-start endpoint, with the `?format=` the client reads. */
  url: string;
}

export interface StopScript {
  clientTitle: string;
  /** Full URL of the transcript endpoint. */
  url: string;
  /** jq path of the transcript file in the hook input: `.transcript_path`, `.transcriptPath`. */
  transcriptField: string;
  /** jq path of the session id in the hook input. */
  sessionField: string;
}

/** Single-quoted for bash: safe for any URL or path. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Shared preamble: the token check, a temp dir, and `post` which runs curl and turns a
 * failure into one readable stderr line. `--fail-with-body` makes an HTTP error a
 * failing command (the interface's rule) while keeping Engram's JSON error for the message.
 */
function preamble(clientTitle: string, hookName: string): string {
  return `set -u
hook=${shellQuote(`engram ${clientTitle} ${hookName} hook`)}

if [ -z "\${ENGRAM_TOKEN:-}" ]; then
  echo "$hook: ENGRAM_TOKEN is not set. Export it in the shell you start ${clientTitle} from (export ENGRAM_TOKEN=egm_...): some clients do not pass their environment on to hooks." >&2
  exit 1
fi
if ! command -v curl >/dev/null 2>&1; then
  echo "$hook: curl is not installed; the hook needs it to reach Engram." >&2
  exit 1
fi

work=$(mktemp -d "\${TMPDIR:-/tmp}/engram-hook.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
# The token goes to curl in a file of this private dir, not on its command line (which \`ps\` shows).
printf 'Authorization: Bearer %s\\n' "$ENGRAM_TOKEN" > "$work/auth"

# post URL CONTENT-TYPE BODY-FILE [EXTRA-HEADER...]: Engram's answer lands in $work/answer.
post() {
  local code
  code=$(curl --silent --show-error --fail-with-body --max-time 20 -X POST \\
    -H @"$work/auth" -H "content-type: $2" \${4:+-H "$4"} \${5:+-H "$5"} \${6:+-H "$6"} \\
    --data-binary @"$3" -o "$work/answer" -w '%{http_code}' "$1" 2>"$work/curl-error")
  local status=$?
  if [ "$status" -ne 0 ]; then
    local detail
    detail=$(head -c 500 "$work/answer" 2>/dev/null)
    echo "$hook: POST $1 failed (HTTP \${code:-none}): $(cat "$work/curl-error") \${detail}" >&2
    if [ "\${code:-}" = "401" ]; then
      echo "$hook: Engram rejected ENGRAM_TOKEN; its message above says why (a revoked token, a provider key, ...). A mistyped or another agent's token gets the generic message." >&2
    fi
    return 1
  fi
}
`;
}

/**
 * The git root of the folder the client runs the hook in (its session's), when there is
 * one: a session started in a subfolder belongs to the repository (DESIGN section 13).
 */
const REPOSITORY_ROOT = `# The repository the session works in, when the hook runs inside one (its scope).
root=$(git rev-parse --show-toplevel 2>/dev/null || true)`;

/** Sends the hook input to the session-start endpoint and prints Engram's JSON answer as is. */
export function sessionStartScript(options: SessionStartScript): string {
  return `#!/usr/bin/env bash
# Engram session-start hook for ${options.clientTitle}, written by \`engram connect\`.
# Prints the agent's root memory index in the JSON form ${options.clientTitle} reads.
${preamble(options.clientTitle, 'session-start')}
url=${shellQuote(options.url)}

cat > "$work/input"
if [ ! -s "$work/input" ]; then printf '{}' > "$work/input"; fi
${REPOSITORY_ROOT}
post "$url" application/json "$work/input" \${root:+"x-engram-repository-root: $root"} || exit 1
cat "$work/answer"
echo
`;
}

/** Uploads the transcript file named in the hook input; prints `{}` once Engram has it. */
export function stopScript(options: StopScript): string {
  return `#!/usr/bin/env bash
# Engram stop hook for ${options.clientTitle}, written by \`engram connect\`.
# Uploads the session transcript named in the hook input; Engram learns from it.
${preamble(options.clientTitle, 'stop')}
url=${shellQuote(options.url)}

if ! command -v jq >/dev/null 2>&1; then
  echo "$hook: jq is not installed; the hook needs it to read the transcript path from ${options.clientTitle}'s hook input (apt install jq, brew install jq)." >&2
  exit 1
fi

cat > "$work/input"
transcript=$(jq -r '${options.transcriptField} // empty' "$work/input" 2>/dev/null)
session=$(jq -r '${options.sessionField} // empty' "$work/input" 2>/dev/null)

if [ -z "$transcript" ]; then
  # Sessions without a transcript file (ephemeral ones) have nothing to upload.
  echo "$hook: the hook input names no transcript file; nothing to upload." >&2
  echo '{}'
  exit 0
fi
if [ ! -r "$transcript" ]; then
  echo "$hook: cannot read the transcript file $transcript" >&2
  exit 1
fi

${REPOSITORY_ROOT}
# The transcript's path too: Claude Code keeps it in the folder of the session's repository root.
post "$url" application/octet-stream "$transcript" "x-engram-transcript-path: $transcript" \${root:+"x-engram-repository-root: $root"} \${session:+"x-engram-session: $session"} || exit 1
echo '{}'
`;
}
