/**
 * The two shapes a redaction step takes, shared by the files that hold Engram's rules:
 * a `Rule` is one regular expression (run where `starts` says a match can begin), a
 * `Finder` is code that returns the spans to redact (the maintained ruleset, the checks
 * that weigh a value's entropy).
 */
import type { Anchors } from './anchors.js';

/**
 * What a marker names. Engram's own rules use these; the ruleset's rules are named after
 * the rule (`gitlab`, `huggingface`). Every kind is lower-case letters and underscores,
 * which is what readers of redacted text match (`\[REDACTED:[a-z_]+\]`).
 */
export type SecretKind =
  | 'private_key'
  | 'url_password'
  | 'url_token'
  | 'bearer_token'
  | 'anthropic_key'
  | 'openai_key'
  | 'github_token'
  | 'aws_access_key_id'
  | 'aws_secret_key'
  | 'slack_token'
  | 'slack_webhook'
  | 'discord_webhook'
  | 'mattermost_webhook'
  | 'zapier_webhook'
  | 'microsoft_teams_webhook'
  | 'google_chat_webhook'
  | 'ifttt_webhook'
  | 'google_api_key'
  | 'google_oauth_token'
  | 'stripe_key'
  | 'jwt'
  | 'engram_token'
  | 'twilio_key'
  | 'digitalocean_token'
  | 'pypi_token'
  | 'xai_key'
  | 'mailgun_key'
  | 'azure_storage_key'
  | 'new_relic_user_api_key'
  | 'telegram_bot_api_token'
  | 'doppler_token'
  | 'heroku_api_key'
  | 'hex_key'
  | 'vendor_token'
  | 'password'
  | 'secret';

export const marker = (kind: string): string => `[REDACTED:${kind}]`;

export const MARKER_OPEN = '[REDACTED:';

/** A value that only stands for a secret: a variable, a template slot, a mask, a marker, an example's filler. */
export const PLACEHOLDER =
  /^(?:\$|<|\{\{|%[sd(]|\*{3}|x{4}|\.\.\.|…|\[REDACTED)|^(?:your|my|the)[-_ ]|^(?:change[-_]?me|changeit|replace[-_]?me|placeholder|dummy|example|todo|tbd)$/i;

/** What a rule's replacer sees of one match. */
export interface Match {
  text: string;
  /** Capture groups in order; `undefined` for a group that did not take part. */
  groups: (string | undefined)[];
  offset: number;
  input: string;
}

export interface Rule {
  kind: SecretKind;
  /** Global; what the rule redacts. */
  pattern: RegExp;
  /** Builds the replacement; by default the whole match becomes the marker. */
  replace?: (match: Match) => string;
  /**
   * Every index where a match that `replace` changes can start (more do no harm), found
   * without running `pattern` over the whole text; a match it skips must not overlap one
   * it lists. Without it the pattern scans the whole text, about 10 µs per 48 KB for a
   * pattern that starts with a rare literal, far more for one that starts with a class.
   */
  starts?: (text: string, anchors: Anchors) => number[];
}

/** `text.slice(start, end)` is a secret, to become `[REDACTED:kind]`. */
export interface Finding {
  start: number;
  end: number;
  kind: string;
}

export interface Finder {
  /** For tests and the redaction table: which step found a span. */
  name: string;
  /** Spans to redact, in any order; overlapping spans and spans over a marker are fine. */
  find: (text: string, anchors: Anchors) => Finding[];
}

export type Step = Rule | Finder;

export const isFinder = (step: Step): step is Finder => 'find' in step;
