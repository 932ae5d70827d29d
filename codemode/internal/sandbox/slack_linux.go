package sandbox

const watchSlack = 32 << 20
