enum Level { Info = "INFO", Warn = "WARN", Error = "ERROR" }
const r = await tools.run_command({command: "printf 'INFO a\\nWARN b\\nERROR c\\nINFO d\\n'"});
const counts: Record<string, number> = {};
for (const line of r.preview.trim().split("\n")) {
  const level = line.split(" ")[0] as Level;
  counts[level] = (counts[level] ?? 0) + 1;
}
return [counts[Level.Info], counts[Level.Warn], counts[Level.Error]];
