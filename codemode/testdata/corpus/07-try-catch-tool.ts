try {
  await tools.read_tool_output({id: "out_does_not_exist"});
  return "no error";
} catch (e: any) {
  return e.message.includes("read_tool_output") ? "caught" : e.message;
}
