class NotFound extends Error {
  constructor(what: string) { super(`${what} not found`); this.name = "NotFound"; }
}
try {
  const r = await tools.run_command({command: "ls /nonexistent-dir-for-corpus 2>&1; true"});
  if (r.preview.includes("No such file")) throw new NotFound("dir");
  return "found";
} catch (e) {
  return e instanceof NotFound ? (e as Error).message : "other";
}
