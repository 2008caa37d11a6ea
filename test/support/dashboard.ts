/**
 * A person's first steps on the dashboard, in a real browser: sign up, create an
 * organisation, create an agent on an upstream. The tests that need a signed-in browser
 * with an agent start from here (the onboarding test walks the same steps itself, checking
 * each page on the way).
 */
import type { BrowserContext } from 'playwright-core';
import { openBrowser, type TestBrowser } from './chromium.js';
import { startEngram, type TestEngram } from './engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream/index.js';

export interface SignedUp {
  /** `/orgs/<org>/agents/<agent>` */
  agentPath: string;
  orgId: string;
  agentId: string;
}

export async function signUpWithAgent(
  context: BrowserContext,
  { engramUrl, upstreamUrl, email, org, agent }: { engramUrl: string; upstreamUrl: string; email: string; org: string; agent: string },
): Promise<SignedUp> {
  const page = await context.newPage();
  try {
    await page.goto(`${engramUrl}/signup`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('a long enough passphrase');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByLabel('Name').fill(org);
    await page.getByRole('button', { name: 'Create organisation' }).click();
    await page.getByLabel('Name', { exact: true }).fill(agent);
    await page.getByLabel('Upstream base URL').fill(upstreamUrl);
    await page.getByLabel('Upstream API key').fill('sk-upstream-secret-key-0000000000000000');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.waitForURL(/\/connect$/);
    const agentPath = new URL(page.url()).pathname.replace(/\/connect$/, '');
    const [, , orgId, , agentId] = agentPath.split('/') as [string, string, string, string, string];
    return { agentPath, orgId, agentId };
  } finally {
    await page.close();
  }
}

/** A scripted upstream, an Engram that lets dashboard users pick it (it is on loopback), and Chromium signed in with an agent on it. */
export interface SignedInDashboard extends SignedUp {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  browser: TestBrowser;
  close(): Promise<void>;
}

export async function startSignedInDashboard(
  person: { email: string; org: string; agent: string },
  engramOptions: Record<string, string> = {},
): Promise<SignedInDashboard> {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'dashboard-upstream-allow-private': 'true', ...engramOptions });
  const browser = await openBrowser();
  const signedUp = await signUpWithAgent(browser.context, { engramUrl: engram.url, upstreamUrl: upstream.url, ...person });
  return {
    ...signedUp,
    upstream,
    engram,
    browser,
    async close() {
      await browser.close();
      await engram.close();
      await upstream.close();
    },
  };
}
