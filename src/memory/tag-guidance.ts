/**
 * What a reflection's tags are for and how to write them (DESIGN sections 5 and 8): one
 * text for every writer of tags, so extraction, the tagging job and the agent's own
 * `remember` calls tag alike and a search finds their reflections alike.
 */

/**
 * The tags paragraph of the extraction prompt (`EXTRACTION_INSTRUCTIONS`), and of the
 * tagging job's (`TAGGING_INSTRUCTIONS`): a change here changes both, on purpose.
 */
export const TAGS_PARAGRAPH = `"tags" are 3 to 8 short lowercase phrases (one to four words each) under which the reflection should be found later, by someone who needs it but does not know it yet: the goal they would have, the symptom or error message they would see, and the everyday or generic names of the things it names (what kind of tool, service or place each one is, and what it is for), with common synonyms. Prefer words the reflection does not already use. Tags are only searched, never shown to the agent: no sentences, no secrets, nothing the reflection does not support. Example: for "Run database migrations with 'make migrate' before 'npm test'; the tests fail on a missing column otherwise." the tags could be ["tests fail missing column", "database schema changes", "test setup order", "db migrate"].`;

/**
 * The same guidance, shortened to a tool parameter's description (MCP `remember`'s
 * `tags`): a client shows it to the model beside the schema.
 */
export const TAGS_PARAMETER_DESCRIPTION =
  '3 to 8 short lowercase phrases (one to four words each) under which a later session that needs this memory, ' +
  'without knowing it yet, would look for it: the goal it would have, the symptom or error message it would see, and ' +
  'the everyday or generic names of what the memory names (what kind of tool, service or place, what it is for), with ' +
  'common synonyms. Prefer words the content does not already use. Searched, never shown: no sentences, no secrets. ' +
  'E.g. for "Run \'make migrate\' before \'npm test\'; the tests fail on a missing column otherwise": ' +
  '"tests fail missing column", "database schema changes", "test setup order", "db migrate".';
