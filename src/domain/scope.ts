/**
 * A conversation's project scope from what a coding CLI states about where it runs
 * (DESIGN section 13), and the checks on scope and user names given by hand. Pure.
 *
 * What each client says is its profile's `place` (`src/clients/<kind>/`), passed in as
 * `PlaceMarkers`; the one form that is no client's own, "Working directory: /path", is
 * read here for every request.
 *
 * The scope is the repository's own name: the root the client names (Copilot), else the
 * nearest folder holding the working directory that the client shows is a repository root
 * (Codex's workspaces, Claude Code's project key), else the working directory; only its
 * last name is kept, so the same repository is one scope on every machine. Limits: two
 * repositories of the same name share a scope, and a client that names no root scopes a
 * subfolder to its own name; `x-engram-scope` says otherwise.
 */

/** The longest scope or user name accepted (a header's value; longer is refused, not cut). */
export const MAX_SCOPE_LENGTH = 200;

/**
 * How a client's texts state where it runs (a `ClientProfile`'s `place`). Each pattern is
 * global, its group 1 the path or key.
 */
export interface PlaceMarkers {
  /**
   * A part of each marker below that JSON never escapes (`<` of `<cwd>` may be), each
   * starting with a letter rare in code and prose: a body whose bytes hold none states no place.
   */
  needles: readonly string[];
  /** What a text holds when it may state a place by these markers (`statesPlace`), tested before any pattern runs. */
  mentions: readonly string[];
  /** The working directory; tried before the generic "working directory:" form. */
  directory?: RegExp;
  /** The repository root, stated outright. */
  root?: RegExp;
  /** A folder key the client names, and how a folder's path becomes its key: a folder whose key is named is a repository root. */
  projectKey?: { pattern: RegExp; of(path: string): string };
}

/** "Working directory: /path" (also "Primary working directory", "Current working directory"): read for any client, after its own markers. */
const ANY_CLIENT: PlaceMarkers = {
  needles: ['king directory'],
  mentions: ['orking directory'],
  directory: /working directory:\s*([^\n\r<]+)/gi,
};

/** Where a client says it runs, gathered from its texts (`placeFromText`) and read by `placeScope`. */
export interface StatedPlace {
  /** The working directory, as stated. */
  directory?: string;
  /** The repository root, when the client says it outright. */
  root?: string;
  /** Folders the client shows are repository roots; they count when they hold the working directory. */
  roots: string[];
  /** Folder keys the client names (`PlaceMarkers.projectKey`). */
  projectKeys: string[];
}

export function emptyPlace(): StatedPlace {
  return { roots: [], projectKeys: [] };
}

/** `markers` and the generic form, with their needles and mentions: built once per list, not per text a request walks. */
interface MarkerTable {
  all: readonly PlaceMarkers[];
  needles: readonly string[];
  mentions: readonly string[];
}
const TABLES = new WeakMap<readonly PlaceMarkers[], MarkerTable>();

function tableOf(markers: readonly PlaceMarkers[]): MarkerTable {
  let table = TABLES.get(markers);
  if (!table) {
    const all = [...markers, ANY_CLIENT];
    table = { all, needles: all.flatMap((marker) => marker.needles), mentions: all.flatMap((marker) => marker.mentions) };
    TABLES.set(markers, table);
  }
  return table;
}

/** Every needle of `markers` and of the generic form (see `PlaceMarkers.needles`). */
export function placeNeedles(markers: readonly PlaceMarkers[]): readonly string[] {
  return tableOf(markers).needles;
}

/** True when `text` may state where the client runs: the test the walks over a request do before `placeFromText`. */
export function statesPlace(text: string, markers: readonly PlaceMarkers[]): boolean {
  return tableOf(markers).mentions.some((mention) => text.includes(mention));
}

/** Adds what `text` states to `place`: the first directory and root (the first found wins), every project key. */
export function placeFromText(text: string, place: StatedPlace, markers: readonly PlaceMarkers[]): StatedPlace {
  if (!statesPlace(text, markers)) return place;
  for (const marker of tableOf(markers).all) {
    place.root ??= marker.root && firstPath(text, marker.root);
    place.directory ??= marker.directory && firstPath(text, marker.directory);
  }
  for (const { projectKey } of markers) {
    if (!projectKey) continue;
    for (const match of text.matchAll(projectKey.pattern)) if (!place.projectKeys.includes(match[1])) place.projectKeys.push(match[1]);
  }
  return place;
}

/** The scope a text of the client's states, if it states a working directory or a repository root. */
export function scopeFromText(text: string, markers: readonly PlaceMarkers[]): string | undefined {
  return placeScope(placeFromText(text, emptyPlace(), markers), markers);
}

/** The scope of what the client stated (see the top of this file), if it stated anything usable. */
export function placeScope(place: StatedPlace, markers: readonly PlaceMarkers[]): string | undefined {
  const root = place.root === undefined ? undefined : repositoryName(place.root);
  if (root !== undefined) return root;
  if (place.directory === undefined) return undefined;
  if (place.roots.length > 0 || place.projectKeys.length > 0) {
    const roots = new Set(place.roots.map(withoutTrailingSeparator));
    for (const folder of folders(place.directory)) {
      if (roots.has(folder) || markers.some(({ projectKey }) => projectKey && place.projectKeys.includes(projectKey.of(folder)))) {
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

/**
 * The scope of a session a hook reports: its working directory, in the repository whose
 * root the hook script found (`root`, counted when it holds the directory) or whose
 * folder key the transcript file's path names (`path`: Claude Code's project folder).
 */
export function hookScope(directory: string, { path, root }: { path?: string; root?: string }, markers: readonly PlaceMarkers[]): string | undefined {
  const place: StatedPlace = { ...emptyPlace(), directory };
  if (root !== undefined) place.roots.push(root);
  if (path !== undefined) placeFromText(path, place, markers);
  return placeScope(place, markers);
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
