/** One scored row of a search inside the SQLite adapter: `key` is the row's `seq`. */
export interface Candidate {
  key: number;
  score: number;
}
