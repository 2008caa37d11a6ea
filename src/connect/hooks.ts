/**
 * The bash hook scripts `engram connect` writes for clients with session hooks, and how
 * their configs point at them. The agent's URL is baked in; the token never is: it comes
 * from `ENGRAM_TOKEN` at run time. Clients parse a hook's stdout, so stdout carries only
 * JSON and every diagnostic goes to stderr.
 */
import path from 'node:path';
import type { ConnectInput, ScriptFile } from './types.js';

export interface HookSpec {
  /** File name prefix: `codex` → `codex-session-start.sh`. */
  prefix: string;
  clientTitle: string;
  /** The session-start endpoint's `?format=` word for the client's answer form (`codex`). */
  format: string;
  /** The endpoint answers in this form when no format is asked: the client's script asks for none. */
  defaultForm?: boolean;
  /** Path below the agent's base URL the stop hook uploads the transcript to: `/transcripts/codex`. */
  stopPath: string;
  /** jq paths of the transcript file and the session id in the client's hook input. */
  transcriptField: string;
  sessionField: string;
}

/**
 * The session-start endpoint below an agent's base URL. It serves every client (the
 * `?format=` says which answer form), and installed hook scripts call it by this path.
 */
export const SESSION_START_PATH = '/copilot/session-start';

/** Path below the agent's base URL, with any query: `/copilot/session-start?format=codex`. */
export function sessionStartPath(spec: HookSpec): string {
  return spec.defaultForm ? SESSION_START_PATH : `${SESSION_START_PATH}?format=${spec.format}`;
}

export interface HookScripts {
  files: ScriptFile[];
  /** The commands a client's hook config runs. */
  sessionStartCommand: string;
  stopCommand: string;
  /** Recognises a hook entry of ours in the client's config (it names one of our scripts). */
  owns(element: unknown): boolean;
}

export function hookScripts(input: ConnectInput, spec: HookSpec): HookScripts {
  const sessionStart = path.join(input.locations.hooksDir, `${spec.prefix}-session-start.sh`);
  const stop = path.join(input.locations.hooksDir, `${spec.prefix}-stop.sh`);
  const base = input.agent.baseUrl;
  const files: ScriptFile[] = [
    {
      type: 'script',
      path: sessionStart,
      purpose: `${spec.clientTitle} session-start hook: fetches the root memory index`,
      content: sessionStartScript(spec.clientTitle, base + sessionStartPath(spec)),
    },
    {
      type: 'script',
      path: stop,
      purpose: `${spec.clientTitle} stop hook: uploads the session transcript`,
      content: stopScript(spec, base + spec.stopPath),
    },
  ];
  const names = [sessionStart, stop].map((file) => JSON.stringify(file).slice(1, -1));
  return {
    files,
    sessionStartCommand: `bash ${shellQuote(sessionStart)}`,
    stopCommand: `bash ${shellQuote(stop)}`,
    owns: (element) => {
      const text = JSON.stringify(element) ?? '';
      return names.some((name) => text.includes(name));
    },
  };
}

/** Seconds a client waits for one of our hooks (the interface's 30 s; curl gives up after 20). */
export const HOOK_TIMEOUT_SECONDS = 30;

/**
 * The SessionStart and Stop entries of Claude Code's settings.json and Codex's hooks.json,
 * which share one shape: event → matcher groups → command hooks.
 */
export function commandHookEdits(hooks: HookScripts) {
  const group = (command: string) => ({ hooks: [{ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS }] });
  return [
    { kind: 'upsert' as const, path: ['hooks', 'SessionStart'], value: group(hooks.sessionStartCommand), owns: hooks.owns },
    { kind: 'upsert' as const, path: ['hooks', 'Stop'], value: group(hooks.stopCommand), owns: hooks.owns },
  ];
}

export const TOKEN_ENV = 'ENGRAM_TOKEN';

/** The caveats every hook client shares, printed with its setup. */
export const HOOK_NOTES = [
  'The hooks read ENGRAM_TOKEN from their environment. Export it in the shell you start the client from: some clients do not pass their environment on to hooks, and a hook without it fails with a message saying so.',
  'The stop hook needs jq (to read the transcript path from the hook input) and curl 7.76 or later (--fail-with-body).',
  `Each hook may take ${HOOK_TIMEOUT_SECONDS} s; curl gives up after 20 s, and an HTTP error from Engram makes the hook fail with Engram's message on stderr.`,
];

/** Single-quoted for bash: safe for any URL or path. */
function shellQuote(value: string): string {
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

/** Sends the hook input to the session-start endpoint (`url`) and prints Engram's JSON answer as is. */
function sessionStartScript(clientTitle: string, url: string): string {
  return `#!/usr/bin/env bash
# Engram session-start hook for ${clientTitle}, written by \`engram connect\`.
# Prints the agent's root memory index in the JSON form ${clientTitle} reads.
${preamble(clientTitle, 'session-start')}
url=${shellQuote(url)}

cat > "$work/input"
if [ ! -s "$work/input" ]; then printf '{}' > "$work/input"; fi
${REPOSITORY_ROOT}
post "$url" application/json "$work/input" \${root:+"x-engram-repository-root: $root"} || exit 1
cat "$work/answer"
echo
`;
}

/** Uploads the transcript file named in the hook input to `url`; prints `{}` once Engram has it. */
function stopScript({ clientTitle, transcriptField, sessionField }: HookSpec, url: string): string {
  return `#!/usr/bin/env bash
# Engram stop hook for ${clientTitle}, written by \`engram connect\`.
# Uploads the session transcript named in the hook input; Engram learns from it.
${preamble(clientTitle, 'stop')}
url=${shellQuote(url)}

if ! command -v jq >/dev/null 2>&1; then
  echo "$hook: jq is not installed; the hook needs it to read the transcript path from ${clientTitle}'s hook input (apt install jq, brew install jq)." >&2
  exit 1
fi

cat > "$work/input"
transcript=$(jq -r '${transcriptField} // empty' "$work/input" 2>/dev/null)
session=$(jq -r '${sessionField} // empty' "$work/input" 2>/dev/null)

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
