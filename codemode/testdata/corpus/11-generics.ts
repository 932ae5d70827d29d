function first<T>(items: T[], pred: (x: T) => boolean): T | undefined {
  return items.find(pred);
}
const r = await tools.run_command({command: "printf '3\\n8\\n12\\n'"});
const nums = r.preview.trim().split("\n").map(Number);
return first<number>(nums, n => n > 5) ?? -1;
