/** The openai SDK (or any client that reads OPENAI_BASE_URL and OPENAI_API_KEY): two variables, no file. */
import type { ConnectRecipe } from '../../connect/types.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import { agentBaseUrlLine, sdkEnv } from '../../connect/sdk-env.js';
import type { ClientProfile } from '../types.js';

const recipe: ConnectRecipe = {
  summary: 'Python or TypeScript `openai` package, or any client reading OPENAI_BASE_URL: chat completions and Responses',
  model: { family: 'openai', fallback: DEFAULT_MODEL.openai, inFiles: false },
  plan(input) {
    const { agent } = input;
    const model = input.model ?? DEFAULT_MODEL.openai;
    return {
      env: sdkEnv('openai', agent),
      snippets: [
        {
          title: 'TypeScript (openai): the client reads both variables',
          language: 'ts',
          text: `import OpenAI from 'openai';\n\nconst client = new OpenAI();\nconst answer = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Where is the release checklist?' }] });\nconsole.log(answer.choices[0].message.content);\n`,
        },
        {
          title: 'Python (openai): the client reads both variables',
          language: 'python',
          text: `from openai import OpenAI\n\nclient = OpenAI()\nanswer = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Where is the release checklist?"}])\nprint(answer.choices[0].message.content)\n`,
        },
      ],
      notes: [
        `The model (${model} here) is any one the agent's upstream serves: Engram passes it on.`,
        `The agent's own address works too: ${agentBaseUrlLine('openai', agent)}`,
      ],
    };
  },
};

export const openaiSdk: ClientProfile = { id: 'openai-sdk', title: 'OpenAI SDK', connect: recipe };
