/** The Anthropic SDK (or any client that reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY): two variables, no file. */
import type { ConnectRecipe } from '../../connect/types.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import { agentBaseUrlLine, sdkEnv } from '../../connect/sdk-env.js';
import type { ClientProfile } from '../types.js';

const recipe: ConnectRecipe = {
  summary: 'Python or TypeScript `anthropic` package, or any client reading ANTHROPIC_BASE_URL: Messages API',
  model: { family: 'anthropic', fallback: DEFAULT_MODEL.anthropic, inFiles: false },
  baseUrlForm: 'anthropic',
  plan(input) {
    const { agent } = input;
    const model = input.model ?? DEFAULT_MODEL.anthropic;
    return {
      env: sdkEnv('anthropic', agent),
      snippets: [
        {
          title: 'TypeScript (@anthropic-ai/sdk): the client reads both variables',
          language: 'ts',
          text: `import Anthropic from '@anthropic-ai/sdk';\n\nconst client = new Anthropic();\nconst answer = await client.messages.create({ model: '${model}', max_tokens: 1024, messages: [{ role: 'user', content: 'Where is the release checklist?' }] });\nconsole.log(answer.content);\n`,
        },
        {
          title: 'Python (anthropic): the client reads both variables',
          language: 'python',
          text: `from anthropic import Anthropic\n\nclient = Anthropic()\nanswer = client.messages.create(model="${model}", max_tokens=1024, messages=[{"role": "user", "content": "Where is the release checklist?"}])\nprint(answer.content)\n`,
        },
      ],
      notes: [
        `The model (${model} here) is any one the agent's upstream serves: Engram passes it on.`,
        'The SDK adds /v1/messages to the base URL itself, so the base URL has no /v1.',
        `The agent's own address works too: ${agentBaseUrlLine('anthropic', agent)}`,
      ],
    };
  },
};

export const anthropicSdk: ClientProfile = { id: 'anthropic-sdk', title: 'Anthropic SDK', connect: recipe };
