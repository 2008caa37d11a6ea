/** The OpenAI Agents SDK: the one base URL with the token as API key, and Engram's MCP server (the token says which agent). */
import { shortBaseUrl, shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe } from '../../connect/types.js';
import { TOKEN_ENV } from '../../connect/hooks.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import type { ClientProfile } from '../types.js';

const recipe: ConnectRecipe = {
  summary: 'Agents built with @openai/agents or openai-agents: a chat-completions model plus Engram\'s memory tools over MCP',
  model: { family: 'openai', fallback: DEFAULT_MODEL.openai, inFiles: false },
  plan(input) {
    const { agent } = input;
    const model = input.model ?? DEFAULT_MODEL.openai;
    const typescript = `import OpenAI from 'openai';
import { Agent, MCPServerStreamableHttp, OpenAIChatCompletionsModel, run } from '@openai/agents';

const token = process.env.${TOKEN_ENV}!;
const engram = new MCPServerStreamableHttp({
  name: 'engram',
  url: '${shortMcpUrl(agent.serverUrl)}',
  requestInit: { headers: { Authorization: \`Bearer \${token}\` } },
});
await engram.connect();
const client = new OpenAI({ baseURL: '${shortBaseUrl(agent.serverUrl)}', apiKey: token });
const helper = new Agent({
  name: 'helper',
  instructions: 'Use your memory tools when they help.',
  model: new OpenAIChatCompletionsModel(client, '${model}'),
  mcpServers: [engram],
});
console.log((await run(helper, 'Where is the release checklist?')).finalOutput);
await engram.close();
`;
    const python = `import asyncio, os
from openai import AsyncOpenAI
from agents import Agent, OpenAIChatCompletionsModel, Runner
from agents.mcp import MCPServerStreamableHttp

token = os.environ["${TOKEN_ENV}"]
client = AsyncOpenAI(base_url="${shortBaseUrl(agent.serverUrl)}", api_key=token)

async def main() -> None:
    async with MCPServerStreamableHttp(
        name="engram",
        params={"url": "${shortMcpUrl(agent.serverUrl)}", "headers": {"Authorization": f"Bearer {token}"}},
    ) as engram:
        helper = Agent(
            name="helper",
            instructions="Use your memory tools when they help.",
            model=OpenAIChatCompletionsModel(model="${model}", openai_client=client),
            mcp_servers=[engram],
        )
        result = await Runner.run(helper, "Where is the release checklist?")
        print(result.final_output)

asyncio.run(main())
`;
    return {
      env: { [TOKEN_ENV]: '' },
      snippets: [
        { title: 'TypeScript (@openai/agents)', language: 'ts', text: typescript },
        { title: 'Python (openai-agents)', language: 'python', text: python },
      ],
      notes: [
        `The model (${model}) must be one the agent's upstream serves; --model picks another.`,
        'The SDK offers Engram\'s tools under their bare names (recall, …); Engram recognises them by the [engram-memory] marker in their descriptions.',
        'Nothing to write: put the snippet in your program.',
      ],
    };
  },
};

export const agentsSdk: ClientProfile = { id: 'agents-sdk', title: 'OpenAI Agents SDK', connect: recipe };
