/**
 * A conversation's project scope from what a coding CLI states about where it runs
 * (DESIGN section 13), and the checks on scope and user names given by hand. Pure.
 *
 * What the clients say (CLIENTS.md; re-check when they change):
 * - Claude Code: `Working directory: /path` in its `<env>` block, or, newer, `Primary
 *   working directory: /path`. Its auto-memory folder, `~/.claude/projects/<key>/memory/`
 *   in the same prompt (and its transcripts' folder, which hooks get), is keyed by the git
 *   root of that directory, every character but letters and digits made `-`.
 * - Codex: `<cwd>/path</cwd>` inside the `<environment_context>` it sends as input; its
 *   turn metadata (`x-codex-turn-metadata`, also in the body's `client_metadata`) lists
 *   the git roots it works in as `workspaces`.
 * - Copilot CLI: `Current working directory: /path` and `Git repository root: /path`
 *   in its system prompt.
 *
 * The scope is the repository's own name: the repository root the client names (Copilot),
 * else the nearest folder holding the working directory that the client shows is a
 * repository root (Codex's workspaces, Claude Code's project key), else the working
 * directory itself; of that path only the last name is kept, so the user's home and the
 * machine's layout (`/home/alice/src/`, `C:\Users\alice\`) drop out and the same
 * repository is one scope on every machine, whichever subfolder a client starts in.
 * Limits: two repositories of the same name share a scope, and a client that names no
 * root (an older client, a folder outside git) started in a subfolder scopes to the
 * subfolder's name; `x-engram-scope` says otherwise.
 */

/** The longest scope or user name accepted (a header's value; longer is refused, not cut). */
export const MAX_SCOPE_LENGTH = 200;

const WORKING_DIRECTORY = /working directory:\s*([^\n\r<]+)/gi;
const REPOSITORY_ROOT = /git repository root:\s*([^\n\r<]+)/gi;
const CODEX_CWD = /<cwd>([^<\n\r]+)<\/cwd>/g;
/** Claude Code's per-project folder: `.claude/projects/<key>/`. */
const CLAUDE_PROJECT = /\.claude[/\\]projects[/\\]([A-Za-z0-9-]+)[/\\]/g;

/** Where a client says it runs, gathered from its texts (`placeFromText`) and read by `placeScope`. */
export interface StatedPlace {
  /** The working directory, as stated. */
  directory?: string;
  /** The repository root, when the client says it outright (Copilot). */
  root?: string;
  /** Folders the client shows are repository roots; they count when they hold the working directory. */
  roots: string[];
  /** Claude Code project keys: a root's path, every character but letters and digits made `-`. */
  projectKeys: string[];
}

export function emptyPlace(): StatedPlace {
  return { roots: [], projectKeys: [] };
}

/**
 * What a text holds when it may state where the client runs (`statesPlace`): a part of
 * each of its markers that JSON never escapes (`<` of `<cwd>` may be), each starting with
 * a letter rare in code and prose, so that scanning a body's bytes for them is fast.
 */
export const PLACE_NEEDLES = ['king directory', 'wd', 'y root', 'jects'] as const;

/** True when `text` may state where the client runs: the test the walks over a request do before `placeFromText`. */
export function statesPlace(text: string): boolean {
  return text.includes('orking directory') || text.includes('<cwd>') || text.includes('repository root') || text.includes('projects');
}

/** Adds what `text` states to `place`: the first directory and root (the first found wins), every project key. */
export function placeFromText(text: string, place: StatedPlace): StatedPlace {
  if (!statesPlace(text)) return place;
  place.root ??= firstPath(text, REPOSITORY_ROOT);
  place.directory ??= firstPath(text, CODEX_CWD) ?? firstPath(text, WORKING_DIRECTORY);
  for (const match of text.matchAll(CLAUDE_PROJECT)) if (!place.projectKeys.includes(match[1])) place.projectKeys.push(match[1]);
  return place;
}

/** The scope a text of the client's states, if it states a working directory or a repository root. */
export function scopeFromText(text: string): string | undefined {
  return placeScope(placeFromText(text, emptyPlace()));
}

/**
 * The git roots Codex's turn metadata lists (`{"workspaces": {"/path": {...}}}`, a JSON
 * text); none when it is not such a text.
 */
export function codexWorkspaces(metadata: unknown): string[] {
  if (typeof metadata !== 'string' || !metadata.includes('"workspaces"')) return [];
  try {
    const workspaces = (JSON.parse(metadata) as { workspaces?: unknown }).workspaces;
    return typeof workspaces === 'object' && workspaces !== null && !Array.isArray(workspaces) ? Object.keys(workspaces) : [];
  } catch {
    return [];
  }
}

/** The scope of what the client stated (see the top of this file), if it stated anything usable. */
export function placeScope(place: StatedPlace): string | undefined {
  const root = place.root === undefined ? undefined : repositoryName(place.root);
  if (root !== undefined) return root;
  if (place.directory === undefined) return undefined;
  if (place.roots.length > 0 || place.projectKeys.length > 0) {
    const roots = new Set(place.roots.map(withoutTrailingSeparator));
    for (const folder of folders(place.directory)) {
      if (roots.has(folder) || place.projectKeys.includes(claudeProjectKey(folder))) {
        const name = repositoryName(folder);
        if (name !== undefined) return name;
      }
    }
  }
  return repositoryName(place.directory);
}

/** `path` and each folder holding it, nearest first, the filesystem root left out. */
function folders(path: string): string[] {
  const out: string[] = [];
  let folder = withoutTrailingSeparator(path.trim());
  while (folder !== '' && !/^[A-Za-z]:$/.test(folder)) {
    out.push(folder);
    const cut = Math.max(folder.lastIndexOf('/'), folder.lastIndexOf('\\'));
    if (cut < 0) break;
    folder = folder.slice(0, cut);
  }
  return out;
}

function withoutTrailingSeparator(path: string): string {
  return path.length > 1 ? path.replace(/[/\\]+$/, '') : path;
}

/** The name Claude Code gives a project's folder under `~/.claude/projects/`. */
function claudeProjectKey(path: string): string {
  return path.replace(/[^A-Za-z0-9]/g, '-');
}

/**
 * The scope of a session a hook reports: its working directory, in the repository whose
 * root the hook script found (`root`, counted when it holds the directory) or whose
 * Claude Code folder holds the transcript file (`path`).
 */
export function hookScope(directory: string, { path, root }: { path?: string; root?: string }): string | undefined {
  const place: StatedPlace = { ...emptyPlace(), directory };
  if (root !== undefined) place.roots.push(root);
  if (path !== undefined) placeFromText(path, place);
  return placeScope(place);
}

/** The first match of `pattern` that is an absolute path (prose may say "working directory:" too), trimmed. */
function firstPath(text: string, pattern: RegExp): string | undefined {
  for (const match of text.matchAll(pattern)) {
    const path = match[1].trim().replace(/^["'`]|["'`]$/g, '');
    if (repositoryName(path) !== undefined) return path;
  }
  return undefined;
}

/** An absolute path, POSIX (`/`, `~/`) or Windows (`C:\`). */
const ABSOLUTE_PATH = /^(\/|~[/\\]|[A-Za-z]:[/\\])/;

/**
 * The last name of an absolute path (POSIX or Windows), or undefined when the text is no
 * such path ("Not a git repository") or names a root (`/`, `C:\`).
 */
export function repositoryName(path: string): string | undefined {
  const trimmed = path.trim().replace(/^["'`]|["'`]$/g, '');
  if (!ABSOLUTE_PATH.test(trimmed)) return undefined;
  const parts = trimmed.split(/[/\\]+/).filter((part) => part !== '' && part !== '.' && part !== '~' && !/^[A-Za-z]:$/.test(part));
  const name = parts.at(-1);
  return name !== undefined && validName(name) ? name : undefined;
}

/**
 * The scope a model names as its project (a memory tool's `project`): the repository's
 * name, or a path to it (its last name is kept, as for a working directory). Undefined
 * when it is neither.
 */
export function projectScope(project: string): string | undefined {
  const trimmed = project.trim();
  if (ABSOLUTE_PATH.test(trimmed)) return repositoryName(trimmed);
  return validName(trimmed) && !/[/\\]/.test(trimmed) ? trimmed : undefined;
}

/** A scope or user name as given by hand: printable, not blank, at most `MAX_SCOPE_LENGTH`. */
export function validName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name.trim() !== '' && name.length <= MAX_SCOPE_LENGTH && !/[\u0000-\u001f\u007f]/.test(name);
}
