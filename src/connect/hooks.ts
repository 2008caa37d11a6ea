/** The hook scripts of the clients with session hooks, and how their configs point at them. */
import path from 'node:path';
import { sessionStartScript, shellQuote, stopScript } from './hook-scripts.js';
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
      content: sessionStartScript({ clientTitle: spec.clientTitle, url: base + sessionStartPath(spec) }),
    },
    {
      type: 'script',
      path: stop,
      purpose: `${spec.clientTitle} stop hook: uploads the session transcript`,
      content: stopScript({ clientTitle: spec.clientTitle, url: base + spec.stopPath, transcriptField: spec.transcriptField, sessionField: spec.sessionField }),
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
