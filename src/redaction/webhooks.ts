/**
 * Incoming-webhook URLs: whoever holds one can post to the channel it names, so the URL is
 * the credential. gitleaks knows Slack's and one shape of Teams' (and redacts only four
 * characters of it); secretlint knows Slack's. These run before both, so the URL is taken whole.
 *
 * The URL up to the credential stays (scheme, host, the fixed path): it says which service
 * a configuration talks to. Slashes may be JSON-escaped (`https:\/\/discord.com\/…`), even
 * twice over. Every rule starts at an `http` that a `://` follows, found once for all rules.
 */
import { BACKSLASH, shared, type Anchors } from './anchors.js';
import { marker, type Match, type Rule, type SecretKind } from './rule.js';

/**
 * A slash, JSON-escaped or not: `\/` in JSON, `\\/` once that JSON is a string in a tool
 * call's arguments, `\\\/` where both escaped the slash.
 */
const S = String.raw`\\{0,3}\/`;
/** `https://` or `http://`, the slashes perhaps escaped. */
const SCHEME = String.raw`\bhttps?:${S}${S}`;

/** `source` (slashes written as `${S}`) as a global, case-sensitive pattern. */
const pattern = (source: string): RegExp => new RegExp(source, 'g');

/** Keeps the first group (the URL up to the credential) and marks the rest. */
const keepPrefix =
  (kind: SecretKind) =>
  (m: Match): string =>
    `${m.groups[0] ?? ''}${marker(kind)}`;

/** Where an `http` or `https` followed by `:/` (the slash perhaps escaped, see `S`) starts, not inside a word. */
export function httpStarts(text: string, anchors: Anchors): number[] {
  return anchors.of('http').filter((i) => {
    const previous = text.charCodeAt(i - 1);
    if (i > 0 && ((previous | 0x20) >= 0x61 && (previous | 0x20) <= 0x7a)) return false;
    const colon = text.charCodeAt(i + 4) === 0x73 ? i + 5 : i + 4;
    if (text.charCodeAt(colon) !== 0x3a) return false;
    // A slash after at most three backslashes (see `S`).
    let slash = colon + 1;
    while (slash - colon <= 3 && text.charCodeAt(slash) === BACKSLASH) slash++;
    return text.charCodeAt(slash) === 0x2f;
  });
}
const starts = shared(httpStarts);

export const WEBHOOK_RULES: readonly Rule[] = [
  {
    // `https://discord.com/api/webhooks/<id>/<token>`, also on discordapp.com, the ptb. and
    // canary. clients' hosts, and with an API version (`/api/v10/webhooks/…`). The id stays.
    kind: 'discord_webhook',
    pattern: pattern(String.raw`(${SCHEME}(?:(?:ptb|canary)\.)?discord(?:app)?\.com${S}api(?:${S}v\d{1,2})?${S}webhooks${S}\d{5,30}${S})[A-Za-z0-9_-]{20,}`),
    replace: keepPrefix('discord_webhook'),
    starts,
  },
  {
    // Mattermost: `https://<host>[/<path>]/hooks/<id>`, the id 26 lower-case letters and
    // digits (Mattermost's ids). Any host, so the id must look generated: letters and digits.
    kind: 'mattermost_webhook',
    pattern: pattern(String.raw`(${SCHEME}[A-Za-z0-9.-]{1,253}(?::\d{1,5})?(?:${S}[A-Za-z0-9._~-]{1,64}){0,3}?${S}hooks${S})([a-z0-9]{26})(?![A-Za-z0-9_-])`),
    replace: (m) => (/[0-9]/.test(m.groups[1] ?? '') && /[a-z]/.test(m.groups[1] ?? '') ? keepPrefix('mattermost_webhook')(m) : m.text),
    starts,
  },
  {
    // Zapier's catch hooks: `https://hooks.zapier.com/hooks/catch/<account>/<hook>/`.
    kind: 'zapier_webhook',
    pattern: pattern(String.raw`(${SCHEME}hooks\.zapier\.com${S}hooks${S}catch${S})\d{1,12}${S}[A-Za-z0-9]{4,32}`),
    replace: keepPrefix('zapier_webhook'),
    starts,
  },
  {
    // Microsoft Teams incoming webhooks (Office 365 connectors): the tenant's
    // `<tenant>.webhook.office.com/webhookb2/<group>@<tenant>/IncomingWebhook/<id>/<owner>…`
    // and the older `outlook.office.com/webhook/…`. The path after the fixed part goes,
    // up to its last letter or digit (a sentence's full stop stays).
    kind: 'microsoft_teams_webhook',
    pattern: pattern(
      String.raw`(${SCHEME}(?:[A-Za-z0-9-]{1,63}\.webhook\.office\.com${S}webhookb2|outlook\.office(?:365)?\.com${S}webhook(?:b2)?)${S})(?:[A-Za-z0-9@._~%-]|${S}){19,2000}[A-Za-z0-9]`,
    ),
    replace: keepPrefix('microsoft_teams_webhook'),
    starts,
  },
  {
    // Google Chat: `https://chat.googleapis.com/v1/spaces/<space>/messages?key=…&token=…`;
    // the query holds both halves of the credential and goes whole (`&` may be `\u0026`, its
    // backslash escaped again in a tool call's arguments).
    kind: 'google_chat_webhook',
    pattern: pattern(
      String.raw`(${SCHEME}chat\.googleapis\.com${S}v1${S}spaces${S}[A-Za-z0-9_-]{1,64}${S}messages\?)(?!\[REDACTED)(?:[^\s"'<>\\()[\]{}\x60]|\\{1,3}u0026){8,2000}`,
    ),
    replace: keepPrefix('google_chat_webhook'),
    starts,
  },
  {
    // IFTTT Webhooks (Maker) keys: `https://maker.ifttt.com/trigger/<event>/with/key/<key>`,
    // `…/trigger/<event>/json/with/key/<key>`, `https://maker.ifttt.com/use/<key>`.
    kind: 'ifttt_webhook',
    pattern: pattern(
      String.raw`(${SCHEME}maker\.ifttt\.com${S}(?:trigger${S}[A-Za-z0-9_.~%-]{1,100}${S}(?:json${S})?with${S}key|use)${S})[A-Za-z0-9_-]{16,64}`,
    ),
    replace: keepPrefix('ifttt_webhook'),
    starts,
  },
  {
    // Slack's incoming webhooks and workflow triggers, taken whole (as before this file).
    kind: 'slack_webhook',
    pattern: pattern(String.raw`${SCHEME}hooks\.slack\.com${S}(?:services|workflows|triggers)${S}(?:[A-Za-z0-9_-]|${S})+`),
    starts,
  },
];
