/**
 * Provider key formats that the maintained ruleset (secretlint's preset, see
 * `ruleset.ts`) has no rule for, each recognisable by a fixed prefix. One line
 * each: the prefix is the anchor, found with `indexOf`, so a rule costs nothing on text
 * without it. Where gitleaks has a rule for the same format its id is named, so the two
 * can be compared when the ruleset grows one.
 */
import { before, type Anchors } from './anchors.js';
import { marker, type Rule } from './rule.js';

/** Starts of `literal`, case-sensitive. */
const at =
  (literal: string) =>
  (_: string, anchors: Anchors): number[] =>
    anchors.of(literal);

/** Where a run of digits (at most `max`) before each index starts. */
const digitsBefore = (text: string, indexes: readonly number[], max: number): number[] =>
  indexes.flatMap((i) => {
    let from = i;
    while (from > 0 && i - from < max && text.charCodeAt(from - 1) >= 0x30 && text.charCodeAt(from - 1) <= 0x39) from--;
    return from < i ? [from] : [];
  });

export const PROVIDER_RULES: readonly Rule[] = [
  // Google OAuth access tokens (gcloud auth print-access-token, an Authorization header
  // already caught, a token pasted in prose). Neither ruleset has one.
  { kind: 'google_oauth_token', pattern: /\bya29\.[0-9A-Za-z_-]{20,}/g, starts: at('ya29.') },
  // Twilio API key SIDs (gitleaks `twilio-api-key`).
  { kind: 'twilio_key', pattern: /\bSK[0-9a-fA-F]{32}\b/g, starts: at('SK') },
  // DigitalOcean personal, OAuth and refresh tokens (gitleaks `digitalocean-pat`,
  // `digitalocean-access-token`, `digitalocean-refresh-token`).
  {
    kind: 'digitalocean_token',
    pattern: /\bdo[opr]_v1_[a-f0-9]{64}\b/g,
    starts: (t, a) => before(t, a.of('_v1_'), 'dop', 'doo', 'dor'),
  },
  // PyPI and TestPyPI upload tokens: a macaroon whose base64 starts `AgE` (gitleaks
  // `pypi-upload-token` knows PyPI's only).
  { kind: 'pypi_token', pattern: /\bpypi-AgE[A-Za-z0-9_-]{50,}/g, starts: at('pypi-') },
  // xAI API keys: `xai-` and 80 letters and digits. Neither ruleset has one.
  { kind: 'xai_key', pattern: /\bxai-[A-Za-z0-9]{40,}/g, starts: at('xai-') },
  // Mailgun private API keys; gitleaks' `mailgun-private-api-token` wants the word
  // "mailgun" before it, but `key-` and 32 hex digits is specific enough alone.
  { kind: 'mailgun_key', pattern: /\bkey-[0-9a-f]{32}\b/g, starts: at('key-') },
  // New Relic user API keys: `NRAK-` and 27 letters and digits. gitleaks'
  // `new-relic-user-api-key` wants "new relic" in the name before it; the prefix alone is
  // specific enough, so a key pasted in prose goes too.
  { kind: 'new_relic_user_api_key', pattern: /\bNRAK-[A-Za-z0-9]{27}\b/g, starts: at('NRAK-') },
  // Telegram bot tokens: the bot's id, `:AA` and 33 base64url characters. gitleaks'
  // `telegram-bot-api-token` wants "telegram" in the name before it.
  {
    kind: 'telegram_bot_api_token',
    pattern: /\b\d{5,16}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g,
    starts: (t, a) => digitsBefore(t, a.of(':AA'), 16),
  },
  // Doppler tokens: service (`dp.st.<config>.`), service account, CLI, SCIM, audit and
  // personal. gitleaks' `doppler-api-token` knows the personal ones (`dp.pt.`) only.
  {
    kind: 'doppler_token',
    pattern: /\bdp\.(?:st|sa|ct|pt|scim|audit)\.(?:[A-Za-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,64}\b/g,
    starts: at('dp.'),
  },
  // Heroku's API keys since 2024: `HRKU-` and 60 base64url characters (gitleaks'
  // `heroku-api-key-v2` wants `HRKU-AA`, exactly 58 more, entropy above 4 and a blank or a
  // quote after, so one followed by a comma or cut short passes it). The prefix is enough.
  { kind: 'heroku_api_key', pattern: /\bHRKU-[A-Za-z0-9_-]{20,}/g, starts: at('HRKU-') },
  // Azure storage and Service Bus connection strings. Neither ruleset has one.
  {
    kind: 'azure_storage_key',
    pattern: /\b((?:Account|SharedAccess)Key=)[A-Za-z0-9+/]{20,}={0,2}/g,
    replace: (m) => m.groups[0] + marker('azure_storage_key'),
    starts: (t, a) => before(t, a.of('Key='), 'Account', 'SharedAccess'),
  },
];
