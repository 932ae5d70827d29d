interface CommandResult {
  preview: string;
  exit_code: number | null;
}
const r: CommandResult = await tools.run_command({command: "printf 'a\\nb\\nc\\n'"});
const lines: string[] = r.preview.split("\n").filter((l: string) => l.length > 0);
return {lines, exit: r.exit_code};
