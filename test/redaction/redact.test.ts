import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { redactSecrets } from '../../src/redaction/redact.js';
import { leavesAlone, redactsTo } from '../support/redaction-cases.js';

// Fake credentials with the real shapes. None of them is live.
const OPENAI = 'sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz_12345-67890abcdEFGHijklMNOPqrst';
const OPENAI_LEGACY = 'sk-T3BlbkFJ0a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8';
const ANTHROPIC = 'sk-ant-api03-Xy9_Zq8wVu7tSr6QpOn5mLk4JiH3gFe2DcB1a0-9876543210abcdefAA';
const GITHUB = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
const GITHUB_PAT = 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV';
const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const SLACK = 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx';
const GOOGLE = 'AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY';
const STRIPE = 'sk_live_51HqLyjWDarjtT1zdp7dcXyZ4Kq8bNVzT3';
const JWT =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const ENGRAM = 'egm_Q2x3c4V5b6N7m8A9s0D1f2G3h4J5k6L7z8X9c0V1b2N';

const cases: [string, string, string][] = [
  ['OpenAI project key in an env line', `OPENAI_API_KEY=${OPENAI}`, 'OPENAI_API_KEY=[REDACTED:openai_key]'],
  ['OpenAI legacy key in prose', `I used ${OPENAI_LEGACY} for it.`, 'I used [REDACTED:openai_key] for it.'],
  ['Anthropic key in a header', `x-api-key: ${ANTHROPIC}`, 'x-api-key: [REDACTED:anthropic_key]'],
  ['GitHub token in a clone URL', `git clone https://${GITHUB}@github.com/acme/app.git`, 'git clone https://[REDACTED:github_token]@github.com/acme/app.git'],
  ['GitHub fine-grained PAT', `export GH_TOKEN=${GITHUB_PAT}`, 'export GH_TOKEN=[REDACTED:github_token]'],
  [
    'AWS credentials file',
    `[default]\naws_access_key_id = ${AWS_ID}\naws_secret_access_key = ${AWS_SECRET}\nregion = eu-west-1`,
    '[default]\naws_access_key_id = [REDACTED:aws_access_key_id]\naws_secret_access_key = [REDACTED:aws_secret_key]\nregion = eu-west-1',
  ],
  [
    'AWS STS JSON output',
    `{"Credentials": {"AccessKeyId": "ASIAY34FZKBOKMUTVV7A", "SecretAccessKey": "${AWS_SECRET}"}}`,
    '{"Credentials": {"AccessKeyId": "[REDACTED:aws_access_key_id]", "SecretAccessKey": "[REDACTED:aws_secret_key]"}}',
  ],
  ['AWS secret near the word "aws"', `aws configure set ${AWS_SECRET}`, 'aws configure set [REDACTED:aws_secret_key]'],
  [
    'PEM private key block',
    'key.pem:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1Bz5cM2yQ==\n-----END RSA PRIVATE KEY-----\nDone.',
    'key.pem:\n[REDACTED:private_key]\nDone.',
  ],
  [
    'PEM key escaped in JSON',
    '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n", "x": 1}',
    '{"private_key": "[REDACTED:private_key]\\n", "x": 1}',
  ],
  [
    'truncated PEM block',
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n[… 900 characters omitted …]',
    '[REDACTED:private_key][… 900 characters omitted …]',
  ],
  [
    'password in a database URL',
    'DATABASE_URL=postgres://app_user:s3cr3t-P%40ss@db.internal:5432/app',
    'DATABASE_URL=postgres://app_user:[REDACTED:url_password]@db.internal:5432/app',
  ],
  ['password in a redis URL without a user', 'redis://:hunter22@cache:6379/0 is down', 'redis://:[REDACTED:url_password]@cache:6379/0 is down'],
  [
    'bearer token in curl',
    'curl -H "Authorization: Bearer abcDEF0123456789xyz.tok" https://api.example.com/v1',
    'curl -H "Authorization: Bearer [REDACTED:bearer_token]" https://api.example.com/v1',
  ],
  ['basic auth header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Authorization: Basic [REDACTED:bearer_token]'],
  ['Slack bot token', `SLACK_BOT_TOKEN=${SLACK}`, 'SLACK_BOT_TOKEN=[REDACTED:slack_token]'],
  [
    'Slack webhook',
    'POST https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now',
    'POST [REDACTED:slack_webhook] now',
  ],
  ['Google API key', `const url = \`https://maps.googleapis.com/api?key=${GOOGLE}\`;`, 'const url = `https://maps.googleapis.com/api?key=[REDACTED:google_api_key]`;'],
  ['Stripe secret key', `stripe.api_key = "${STRIPE}"`, 'stripe.api_key = "[REDACTED:stripe_key]"'],
  ['JWT in a cookie', `Cookie: session=${JWT}; Path=/`, 'Cookie: session=[REDACTED:jwt]; Path=/'],
  ['Engram token', `X-Engram-Api-Key: ${ENGRAM}`, 'X-Engram-Api-Key: [REDACTED:engram_token]'],
  ['password assignment', 'mysql.password=hunter2', 'mysql.password=[REDACTED:password]'],
  ['quoted password with spaces', 'DB_PASSWORD="correct horse battery staple"', 'DB_PASSWORD="[REDACTED:password]"'],
  ['YAML password', 'database:\n  user: app\n  password: supersecret\n', 'database:\n  user: app\n  password: [REDACTED:password]\n'],
  ['JSON api_key', '{"api_key": "abc123def456ghi"}', '{"api_key": "[REDACTED:secret]"}'],
  ['JSON escaped inside JSON', '"{\\"client_secret\\": \\"9f8e7d6c5b4a\\"}"', '"{\\"client_secret\\": \\"[REDACTED:secret]\\"}"'],
  ['token in a query string', 'GET /hook?token=a1b2c3d4e5&user=7', 'GET /hook?token=[REDACTED:secret]&user=7'],
  ['secret in a header line', 'X-Api-Key: 0123456789abcdef', 'X-Api-Key: [REDACTED:secret]'],
  ['password flag', 'mysql -h db --password hunter22 app', 'mysql -h db --password [REDACTED:password] app'],
  ['weak password that names itself', 'password=Password123', 'password=[REDACTED:password]'],
];

redactsTo(cases);

const untouched: [string, string][] = [
  ['prose about secrets', 'Never commit the API key; store the password in the vault and rotate the token monthly.'],
  ['TypeScript types', 'interface Auth { password: string; token?: string; apiKey: string | undefined }'],
  ['code reading secrets', 'const password = req.body.password;\nconst token = await getToken();\nif (password == null) return;'],
  ['code naming the secret', 'this.apiKey = apiKey;\nself.token = token\nconst secret = crypto.randomBytes(32);'],
  ['environment references', 'API_KEY=$OPENAI_API_KEY and password: ${DB_PASSWORD} and token: process.env.TOKEN'],
  ['placeholders', 'OPENAI_API_KEY=<your-key> api_key: "your-api-key" password=*** token="xxxx"'],
  ['token counts', 'max_tokens: 1024, token_count = 5, tokens=3, tokenizer: cl100k'],
  ['git hashes near "secret"', 'commit 3f2a9c1d4b5e6f708192a3b4c5d6e7f809112233 rotates the secret'],
  ['URLs without credentials', 'See http://localhost:8080/health and https://example.com:8443/a@b and git@github.com:acme/app.git'],
  ['email addresses', 'Mail alice@example.com or bob.smith@corp.example.org'],
  ['sk- words', 'The task-runner and the risk-management docs; use sk-learn-style names.'],
  ['prose after a colon', 'Password: incorrect, please try again. Secret: nobody knows why.'],
  ['bearer in prose', 'The API uses bearer authentication; send a bearer token in the header.'],
  ['a UUID and a base64 blob', 'id 123e4567-e89b-12d3-a456-426614174000 data aGVsbG8gd29ybGQ='],
  ['shell comparisons', 'if [ "$TOKEN" == "" ]; then echo missing; fi'],
  ['Authorization from a variable', 'curl -H "Authorization: Bearer $OPENAI_API_KEY" https://api'],
  ['already redacted', 'password=[REDACTED:password] and key [REDACTED:openai_key]'],
  ['a call assigned to a secret name', "const token = randomBytes(32).toString('base64url');\nconst secretKey = readFileSync(file, 'utf8');"],
  ['a file name with a flag-like word inside', 'a token is generated into <dataDir>/admin-token (0600, dir 0700) and reused'],
  ["an example's filler", 'SESSION_SECRET=change-me\nDB_PASSWORD=changeme'],
  ['types and indexing', 'open(nonce: Uint8Array, secretKey: Uint8Array): Uint8Array;\nconst token = match[1];\nexport type SetToken = Char | Set;'],
];

leavesAlone(untouched);

test('is idempotent', () => {
  const once = redactSecrets(cases.map(([, input]) => input).join('\n'));
  assert.is(redactSecrets(once), once);
});

test('redacts several secrets in one realistic tool output', () => {
  const output = [
    '$ cat .env',
    `OPENAI_API_KEY=${OPENAI}`,
    `GITHUB_TOKEN=${GITHUB}`,
    'DATABASE_URL=mysql://root:toor123@localhost:3306/shop',
    'LOG_LEVEL=debug',
  ].join('\n');
  assert.is(
    redactSecrets(output),
    [
      '$ cat .env',
      'OPENAI_API_KEY=[REDACTED:openai_key]',
      'GITHUB_TOKEN=[REDACTED:github_token]',
      'DATABASE_URL=mysql://root:[REDACTED:url_password]@localhost:3306/shop',
      'LOG_LEVEL=debug',
    ].join('\n'),
  );
});

// Each rule runs only where a cheap search (a character, a word in any case) says a match
// could start; these pin the edges of those searches.
const anchored: [string, string, string][] = [
  ['key words in upper case', 'BEARER abcDEF0123456789xyz.tok', 'BEARER [REDACTED:bearer_token]'],
  ['an upper-case header with spaces', 'AUTHORIZATION = Bearer abcDEF0123456789', 'AUTHORIZATION = Bearer [REDACTED:bearer_token]'],
  [
    'a quoted header name, its colon on the next line',
    '"Authorization"\n  : "Basic dXNlcjpwYXNzd29yZA=="',
    '"Authorization"\n  : "Basic [REDACTED:bearer_token]"',
  ],
  ['a quoted key, blanks around the colon', '"password"  :  "hunter2x"', '"password"  :  "[REDACTED:password]"'],
  ['a key right after another separator', 'x=password=hunter22', 'x=password=[REDACTED:password]'],
  ['the longest key word, a tab', 'REFRESH_TOKEN:\t"abc123def456"', 'REFRESH_TOKEN:\t"[REDACTED:secret]"'],
  ['a key at the very start', 'token=abc123def', 'token=[REDACTED:secret]'],
  [
    'a URL with credentials after one without',
    'see https://a.example/x and postgres://u:pw123@db/x',
    'see https://a.example/x and postgres://u:[REDACTED:url_password]@db/x',
  ],
  ['a scheme glued to a word', 'xhttps://u:pw123@h', 'xhttps://u:[REDACTED:url_password]@h'],
  ['an upper-case flag', '--API-KEY abc123def', '--API-KEY [REDACTED:secret]'],
  ['an AWS key id at the very end', 'id AKIAIOSFODNN7EXAMPLE', 'id [REDACTED:aws_access_key_id]'],
  [
    'a second secret after the first one changed the text',
    'mysql://root:toor123@localhost/shop\nconst a = 1; b: 2; password = "s3cr3t!"',
    'mysql://root:[REDACTED:url_password]@localhost/shop\nconst a = 1; b: 2; password = "[REDACTED:password]"',
  ],
  ['a mixed-case AWS secret key name', `Secret_Access_Key = ${AWS_SECRET}`, 'Secret_Access_Key = [REDACTED:aws_secret_key]'],
  // "secret" overlaps "aws" here; its 80 characters reach two further than those of "aws".
  ['a bare AWS secret 80 characters after "secret" in "awsecret"', `awsecret${' '.repeat(73)}${AWS_SECRET}`, `awsecret${' '.repeat(73)}[REDACTED:aws_secret_key]`],
  ['a bare AWS secret 80 characters after "aws"', `aws${' '.repeat(77)}${AWS_SECRET}`, `aws${' '.repeat(77)}[REDACTED:aws_secret_key]`],
  ['a bare AWS secret 81 characters after "aws"', `aws${' '.repeat(78)}${AWS_SECRET}`, `aws${' '.repeat(78)}${AWS_SECRET}`],
];

for (const [name, input, expected] of anchored) {
  test(`anchored search: ${name}`, () => {
    assert.is(redactSecrets(input), expected);
  });
}

test('leaves a long ordinary text unchanged', () => {
  const text = 'The deploy script lives in tools/deploy.sh and reads DEPLOY_ENV; run npm test first.\n'.repeat(600);
  assert.is(redactSecrets(text), text);
});

test('leaves ordinary code with separators, dashes, URLs and key words unchanged', () => {
  const block = [
    'export async function loadItems(client: HttpClient, options: { limit?: number } = {}): Promise<Item[]> {',
    '  // Pages through https://api.example.com/v1/items; the auth token comes from the session.',
    '  const limit = options.limit ?? 50;',
    '  const response = await client.get(`/v1/items?limit=${limit}&sort=created_at`, { retries: 3 });',
    '  if (response.status !== 200) throw new ApiError(`list-items failed: ${response.status}`);',
    '  return response.body.items.map((item: RawItem) => ({ id: item.id, name: item.display_name }));',
    '}',
    '',
    'Run `npm run build -- --watch` in one terminal and `npm test` in another; see docs/dev-setup.md.',
  ].join('\n');
  const text = (block + '\n').repeat(Math.ceil(48_000 / block.length)).slice(0, 48 * 1024);
  assert.is(redactSecrets(text), text);
});

test.run();
