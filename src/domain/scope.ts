/**
 * A conversation's project scope from what a coding CLI states about where it runs
 * (DESIGN section 13), and the checks on scope and user names given by hand. Pure.
 *
 * What the clients say (CLIENTS.md; re-check when they change):
 * - Claude Code: `Working directory: /path` in its `<env>` block, or, newer, `Primary
 *   working directory: /path` in a system entry of the message list.
 * - Codex: `<cwd>/path</cwd>` inside the `<environment_context>` it sends as input.
 * - Copilot CLI: `Current working directory: /path` and `Git repository root: /path`
 *   in its system prompt.
 *
 * The scope is the repository's own name: the repository root when the client names it
 * (Copilot), else the working directory; of that path only the last name is kept, so
 * the user's home and the machine's layout (`/home/alice/src/`, `C:\Users\alice\`) drop
 * out and the same repository is one scope on every machine. Limits: a client started in
 * a subdirectory without naming the root scopes to the subdirectory's name, and two
 * repositories of the same name share a scope; `x-engram-scope` says otherwise.
 */

/** The longest scope or user name accepted (a header's value; longer is refused, not cut). */
export const MAX_SCOPE_LENGTH = 200;

const WORKING_DIRECTORY = /working directory:\s*([^\n\r<]+)/gi;
const REPOSITORY_ROOT = /git repository root:\s*([^\n\r<]+)/gi;
const CODEX_CWD = /<cwd>([^<\n\r]+)<\/cwd>/g;

/** The scope a text of the client's states, if it states a working directory. */
export function scopeFromText(text: string): string | undefined {
  // Cheap tests first: most texts of most requests say nothing of the kind.
  const stated = text.includes('orking directory') || text.includes('<cwd>') || text.includes('repository root');
  if (!stated) return undefined;
  return firstPath(text, REPOSITORY_ROOT) ?? firstPath(text, CODEX_CWD) ?? firstPath(text, WORKING_DIRECTORY);
}

/** The repository name of the first match of `pattern` that holds a path (prose may say "working directory:" too). */
function firstPath(text: string, pattern: RegExp): string | undefined {
  for (const match of text.matchAll(pattern)) {
    const name = repositoryName(match[1]);
    if (name !== undefined) return name;
  }
  return undefined;
}

/**
 * The last name of an absolute path (POSIX or Windows), or undefined when the text is no
 * such path ("Not a git repository") or names a root (`/`, `C:\`).
 */
export function repositoryName(path: string): string | undefined {
  const trimmed = path.trim().replace(/^["'`]|["'`]$/g, '');
  if (!/^(\/|~[/\\]|[A-Za-z]:[/\\])/.test(trimmed)) return undefined;
  const parts = trimmed.split(/[/\\]+/).filter((part) => part !== '' && part !== '.' && part !== '~' && !/^[A-Za-z]:$/.test(part));
  const name = parts.at(-1);
  return name !== undefined && validName(name) ? name : undefined;
}

/** A scope or user name as given by hand: printable, not blank, at most `MAX_SCOPE_LENGTH`. */
export function validName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name.trim() !== '' && name.length <= MAX_SCOPE_LENGTH && !/[\u0000-\u001f\u007f]/.test(name);
}
