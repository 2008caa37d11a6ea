/**
 * What `engram connect` works with: the agent it connects a client to, where that
 * client keeps its files, and the setup each client kind asks for.
 */

/** The agent as the management API shows it (`GET /v0/orgs/{org}/agents/{agent}`). */
export interface AgentInfo {
  id: string;
  orgId: string;
  name: string;
  /** `<server>/v0/orgs/{org}/agents/{agent}`: endpoints 1-3 and the hook endpoints hang below it. */
  baseUrl: string;
  /** `<baseUrl>/v0/mcp` */
  mcpUrl: string;
  /** `<server>`: the part of `baseUrl` before `/v0/orgs/...`. */
  serverUrl: string;
}

/** Where the client kinds keep their configuration (derived from one home dir). */
export interface Locations {
  home: string;
  /** `~/.config` (or `$XDG_CONFIG_HOME`). */
  configHome: string;
  /** The variables the kind's recipe reads (`ConnectRecipe.env`), undefined when unset; none under an explicit `--home`. */
  env: Readonly<Record<string, string | undefined>>;
  /** `~/.config/engram/hooks`: the hook scripts `connect --write` writes. */
  hooksDir: string;
}

export interface ConnectInput {
  agent: AgentInfo;
  locations: Locations;
  /** The agent token, when one was given or minted; only files that cannot reference `$ENGRAM_TOKEN` use it. */
  token: string | undefined;
  /** Model name for clients whose provider entry lists models (`ClientKind.model`); undefined means the kind's default. */
  model: string | undefined;
  /** `--settings-env`, for a kind that takes it (`ConnectRecipe.settingsEnv`): also put the base URL and the token header in its settings file's `env`. */
  settingsEnv?: boolean;
}

/** The model a client kind's configuration names: which dialect lists it, and the name used when none can be asked for. */
export interface ModelChoice {
  /** `openai`: the upstream's `GET /v1/models` as OpenAI answers it; `anthropic`: as Anthropic does (`anthropic-version`). */
  family: 'openai' | 'anthropic';
  fallback: string;
  /** The model goes into a file `--write` writes (not only into printed exports or snippets). */
  inFiles: boolean;
}

/** A JSON path: object keys and array indexes. */
export type KeyPath = (string | number)[];

/** One change to a structured (JSON or TOML) file. */
export type Edit =
  /** Put `value` at `path`, replacing what is there. */
  | { kind: 'set'; path: string[]; value: unknown }
  /**
   * Keep exactly one element of the array at `path` that `owns` recognises, equal to
   * `value`; the user's other elements stay as they are.
   */
  | { kind: 'upsert'; path: string[]; value: unknown; owns: (element: unknown) => boolean };

export type FileFormat = 'json' | 'jsonc' | 'toml';

export interface StructuredFile {
  type: 'structured';
  path: string;
  format: FileFormat;
  edits: Edit[];
  /** What the file is for, one line. */
  purpose: string;
  /** The file holds the token in clear: written (and kept) mode 0600. */
  secret?: boolean;
}

export interface ScriptFile {
  type: 'script';
  path: string;
  content: string;
  purpose: string;
}

export type PlannedFile = StructuredFile | ScriptFile;

export interface Snippet {
  title: string;
  language: string;
  text: string;
}

/** Everything one client kind needs: files to merge or write, and what to print. */
export interface Setup {
  files: PlannedFile[];
  /**
   * Shell exports the user adds to the profile the client starts from. `ENGRAM_TOKEN`
   * with an empty value stands for the agent token (filled in when it is known).
   */
  env: Record<string, string>;
  /** Equivalent commands of the client's own CLI, for people who prefer them. */
  commands: string[];
  snippets: Snippet[];
  notes: string[];
}

/** How `engram connect` sets up one client kind (a `ClientProfile`'s `connect`). */
export interface ConnectRecipe {
  summary: string;
  /** Its files must hold the token itself, so a token is required to write them. */
  needsToken?: boolean;
  /** Its configuration names a model, which must be one the agent's upstream serves. */
  model?: ModelChoice;
  /**
   * The form of Engram's one base URL its configuration names, printed first so the two
   * agree: `openai`, `<server>/v1` (the default), or `anthropic`, `<server>` (the client
   * adds `/v1/messages` itself).
   */
  baseUrlForm?: 'openai' | 'anthropic';
  /** It takes `--settings-env`: its settings file can carry the base URL and token header (`ConnectInput.settingsEnv`). */
  settingsEnv?: boolean;
  /** Environment variables that name the kind's dirs, read into `Locations.env`. */
  env?: readonly string[];
  /** The setup; what it leaves out is empty. */
  plan(input: ConnectInput): Partial<Setup>;
}

/** One client kind of the interface's "Supported client kinds" table: a profile's recipe under its id and title. */
export interface ClientKind extends ConnectRecipe {
  /** The `engram connect <name>` word: the profile's id. */
  name: string;
  title: string;
  plan(input: ConnectInput): Setup;
}
