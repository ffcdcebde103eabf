int main() { return 0; }  // placeholder until the CLI lands
