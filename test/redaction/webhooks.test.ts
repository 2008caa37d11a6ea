/**
 * Webhook URLs (src/redaction/webhooks.ts) and Heroku's `HRKU-` keys: each rule's true
 * positives, plain, JSON-escaped and inside JSON, and the URLs beside them that hold no
 * credential. Fake credentials with the real shapes; none is live.
 */
import { test } from 'uvu';
import { leavesAlone, redactsTo } from '../support/redaction-cases.js';

const DISCORD_TOKEN = 'Xq3vB9nR4tW1yH6mC0dS5gAkP7zL2jF8uE_-Kd9fJ3mQ7vR2tL8pW4nB6xC1zY5hG0sA3e';
const UUID = '7b1e4c2a-9d3f-4a8b-b6e5-1c0d2f3a4b5c';

const cases: [string, string, string][] = [
  [
    'Discord',
    `notify https://discord.com/api/webhooks/1187654321098765432/${DISCORD_TOKEN} on failure`,
    'notify https://discord.com/api/webhooks/1187654321098765432/[REDACTED:discord_webhook] on failure',
  ],
  [
    'Discord on discordapp.com, the canary host, an API version',
    `https://canary.discordapp.com/api/v10/webhooks/1187654321098765432/${DISCORD_TOKEN}?wait=true`,
    'https://canary.discordapp.com/api/v10/webhooks/1187654321098765432/[REDACTED:discord_webhook]?wait=true',
  ],
  [
    'Discord, JSON-escaped slashes',
    `{"url":"https:\\/\\/ptb.discord.com\\/api\\/webhooks\\/1187654321098765432\\/${DISCORD_TOKEN}"}`,
    '{"url":"https:\\/\\/ptb.discord.com\\/api\\/webhooks\\/1187654321098765432\\/[REDACTED:discord_webhook]"}',
  ],
  [
    'Mattermost',
    'MM_HOOK: https://chat.acme.io/hooks/xi8c3n4b5m6q7w8e9r0t1y2u3i',
    'MM_HOOK: https://chat.acme.io/hooks/[REDACTED:mattermost_webhook]',
  ],
  [
    'Mattermost under a path and a port',
    'curl -X POST https://acme.example:8065/mattermost/hooks/kq4z8wb1nf7ycx3d5ugr9ep2ma -d @msg.json',
    'curl -X POST https://acme.example:8065/mattermost/hooks/[REDACTED:mattermost_webhook] -d @msg.json',
  ],
  [
    'Zapier',
    'the Zap listens on https://hooks.zapier.com/hooks/catch/1234567/3ab9xq2/ for new rows',
    'the Zap listens on https://hooks.zapier.com/hooks/catch/[REDACTED:zapier_webhook]/ for new rows',
  ],
  [
    'Microsoft Teams (webhook.office.com)',
    `https://acme.webhook.office.com/webhookb2/${UUID}@${UUID}/IncomingWebhook/0123456789abcdef0123456789abcdef/${UUID}/V2aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4yZ5aB6c1.`,
    'https://acme.webhook.office.com/webhookb2/[REDACTED:microsoft_teams_webhook].',
  ],
  [
    'Microsoft Teams (outlook.office.com), JSON-escaped',
    `"https:\\/\\/outlook.office.com\\/webhook\\/${UUID}@${UUID}\\/IncomingWebhook\\/0123456789abcdef0123456789abcdef\\/${UUID}"`,
    '"https:\\/\\/outlook.office.com\\/webhook\\/[REDACTED:microsoft_teams_webhook]"',
  ],
  [
    'Google Chat',
    "WEBHOOK='https://chat.googleapis.com/v1/spaces/AAAAx1b2c3D/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token=q7Vd3kX9mL2pR8tW4nB6jH1fG5cY0zA3sE7uI9oK2lM%3D'",
    "WEBHOOK='https://chat.googleapis.com/v1/spaces/AAAAx1b2c3D/messages?[REDACTED:google_chat_webhook]'",
  ],
  [
    'Google Chat, the ampersand JSON-escaped',
    '"https://chat.googleapis.com/v1/spaces/AAAAx1b2c3D/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI\\u0026token=q7Vd3kX9mL2pR8tW4nB6jH1fG5cY0zA3sE7uI9oK2lM%3D"',
    '"https://chat.googleapis.com/v1/spaces/AAAAx1b2c3D/messages?[REDACTED:google_chat_webhook]"',
  ],
  [
    'IFTTT',
    'curl https://maker.ifttt.com/trigger/deploy_done/json/with/key/bX9kQ2vR7tLp4WzB8nC3jD',
    'curl https://maker.ifttt.com/trigger/deploy_done/json/with/key/[REDACTED:ifttt_webhook]',
  ],
  ['IFTTT, the short form', 'http://maker.ifttt.com/use/bX9kQ2vR7tLp4WzB8nC3jD', 'http://maker.ifttt.com/use/[REDACTED:ifttt_webhook]'],
  [
    'Slack, JSON-escaped slashes',
    '{"webhook":"https:\\/\\/hooks.slack.com\\/services\\/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"}',
    '{"webhook":"[REDACTED:slack_webhook]"}',
  ],
  [
    'Heroku HRKU- key',
    'heroku authorizations:create printed HRKU-AAo0mQ2vR7tLp4WzB8nC3jD5fG6hJ7kL8mN9pQ0rS1tU2vW3xY4zA5bC6dE7fG8_h, then',
    'heroku authorizations:create printed [REDACTED:heroku_api_key], then',
  ],
  [
    'Heroku HRKU- key of one letter (an example, still shaped like a key)',
    `HEROKU_API_KEY="HRKU-${'A'.repeat(58)}_x"`,
    'HEROKU_API_KEY="[REDACTED:heroku_api_key]"',
  ],
];

redactsTo(cases, { again: true });

const untouched: [string, string][] = [
  ['Discord docs and channel links', 'See https://discord.com/developers/docs/resources/webhook and https://discord.com/channels/1187654321098765432/1187654321098765433'],
  ['a Discord webhook URL without its token', 'POST https://discord.com/api/webhooks/{webhook.id}/{webhook.token}'],
  ['GitHub and GitLab hook settings', 'https://github.com/acme/app/settings/hooks/412345678 and https://gitlab.example.com/acme/app/hooks/abcdefghijklmnopqrstuvwxyz'],
  ['a hooks path with a word', 'https://docs.mattermost.com/hooks/incoming-webhooks-introduction'],
  ['Zapier without a hook', 'Zapier posts to https://hooks.zapier.com/hooks/catch/ followed by your ids'],
  ['Outlook and Office links', 'https://outlook.office.com/mail/inbox and https://acme.webhook.office.com/'],
  ['Google Chat without a query', 'https://chat.googleapis.com/v1/spaces/AAAAx1b2c3D/messages is the endpoint'],
  ['an IFTTT placeholder', 'https://maker.ifttt.com/trigger/{event}/with/key/{your_key}'],
  ['the HRKU- prefix named', 'Heroku keys now start with HRKU- and are 65 characters long.'],
];

leavesAlone(untouched);

test.run();
