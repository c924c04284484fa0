/** What the sandbox gets back from every host call: never a thrown host error (it would carry a host stack). */
export type HostAnswer = [true, unknown] | [false, string];
