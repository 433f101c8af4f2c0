import { readFileSync } from 'node:fs';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';

/**
 * The Dockerfile read into what the image is: its stages, and for the runtime stage (the last) the
 * environment, user, working directory, the files it copies, its volume, port, healthcheck and
 * command. The image tests run exactly this outside Docker (run.ts), and lint it (lint.test.ts).
 */
export interface Copy {
  from: string | undefined;
  sources: string[];
  dest: string;
}

export interface Stage {
  name: string | undefined;
  image: string;
  tag: string | undefined;
  instructions: Instruction[];
}

export interface ImageSpec {
  text: string;
  stages: Stage[];
  env: Record<string, string>;
  user: string;
  workdir: string;
  copies: Copy[];
  volumes: string[];
  exposed: number[];
  entrypoint: string[];
  cmd: string[];
  healthcheck: string[];
}

const jsonArray = (text: string): string[] => JSON.parse(text) as string[];

export function readImageSpec(file = 'Dockerfile'): ImageSpec {
  const text = readFileSync(file, 'utf8');
  const dockerfile = DockerfileParser.parse(text);
  const stages: Stage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const from = dockerfile.getFROMs()[stages.length]!;
      stages.push({ name: from.getBuildStage() ?? undefined, image: from.getImageName() ?? '', tag: from.getImageTag() ?? undefined, instructions: [] });
    }
    stages.at(-1)?.instructions.push(instruction);
  }
  const runtime = stages.at(-1)!.instructions;
  const all = (keyword: string) => runtime.filter((i) => i.getKeyword() === keyword);
  const last = (keyword: string) => all(keyword).at(-1);
  const argsOf = (i: Instruction | undefined) => i?.getArguments().map((a) => a.getValue()) ?? [];
  const env: Record<string, string> = {};
  for (const instruction of all('ENV')) {
    for (const property of (instruction as unknown as { getProperties(): { getName(): string; getValue(): string | null }[] }).getProperties()) {
      env[property.getName()] = property.getValue() ?? '';
    }
  }
  const copies = all('COPY').map((instruction) => {
    const args = argsOf(instruction);
    const from = (instruction as unknown as { getFromFlag(): { getValue(): string | null } | null }).getFromFlag()?.getValue() ?? undefined;
    return { from, sources: args.slice(0, -1), dest: args.at(-1)! };
  });
  const healthcheck = /\bCMD\s+(\[.*\])\s*$/s.exec(last('HEALTHCHECK')?.getArgumentsContent() ?? '')?.[1];
  return {
    text,
    stages,
    env,
    user: argsOf(last('USER'))[0] ?? 'root',
    workdir: argsOf(last('WORKDIR'))[0] ?? '/',
    copies,
    volumes: all('VOLUME').flatMap((i) => jsonArray(i.getArgumentsContent() ?? '[]')),
    exposed: all('EXPOSE').flatMap((i) => argsOf(i).map((port) => Number.parseInt(port, 10))),
    entrypoint: jsonArray(last('ENTRYPOINT')?.getArgumentsContent() ?? '[]'),
    cmd: jsonArray(last('CMD')?.getArgumentsContent() ?? '[]'),
    healthcheck: healthcheck ? jsonArray(healthcheck) : [],
  };
}
