import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, SELF_DECLARED_DEPS_METADATA } from '@nestjs/common/constants';
import { MetadataScanner } from '@nestjs/core';
import { BudgetService } from '../billing/budget.service';
import { createJsonLogger, JsonLoggerService, parseEnv } from '@gateway/platform';
import { join } from 'node:path';
import { EdgeModule } from '../app.module';
import { EdgeEnv } from '../config/edge.env';
import { AdmissionGuard } from '../admission/admission.guard';
import { TextGenerationController } from '../text-generation/text-generation.controller';
import { METERED_RELAY, METERED_ROUTE, UNMETERED_ROUTE } from './metering.decorators';

type Provider = NonNullable<ReturnType<typeof EdgeModule.forRoot>['providers']>[number];

/** The edge's module as main.ts builds it: its controllers and the classes each token resolves to. */
function edgeModule() {
  const env = parseEnv(EdgeEnv, { MODELS_CONFIG: join(__dirname, '../../../../config/models.yaml'), FILE_URL_SECRET: 'x'.repeat(32) });
  const module = EdgeModule.forRoot(env, new JsonLoggerService(createJsonLogger('edge-gateway', 'error')));
  const classes = new Map<unknown, Type>();
  for (const provider of (module.providers ?? []) as Provider[]) {
    if (typeof provider === 'function') classes.set(provider, provider);
    else if ('useClass' in provider) classes.set(provider.provide, provider.useClass);
  }
  return { controllers: (module.controllers ?? []) as Type[], classes };
}

/** What Nest would inject into the class's constructor, `@Inject(token)` included; only class providers are followed. */
function dependenciesOf(type: Type, classes: Map<unknown, Type>): Type[] {
  const tokens: unknown[] = [...(Reflect.getMetadata('design:paramtypes', type) ?? [])];
  for (const { index, param } of Reflect.getMetadata(SELF_DECLARED_DEPS_METADATA, type) ?? []) tokens[index] = param;
  return tokens.map((token) => classes.get(token)).filter((dependency): dependency is Type => dependency !== undefined);
}

/** The metered relays a class reaches through its constructor, however deep. */
function relaysReachedBy(type: Type, classes: Map<unknown, Type>, seen = new Set<Type>()): Type[] {
  if (seen.has(type)) return [];
  seen.add(type);
  const own = Reflect.getMetadata(METERED_RELAY, type) ? [type] : [];
  return [...own, ...dependenciesOf(type, classes).flatMap((dependency) => relaysReachedBy(dependency, classes, seen))];
}

const paths = (value: string | string[] | undefined): string[] => [value ?? ''].flat();

/** `POST /v1/systemone, /v1/decisions`, as a client calls the handler. */
function routeOf(controller: Type, handler: object): string {
  const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
  const urls = paths(Reflect.getMetadata(PATH_METADATA, controller)).flatMap((base) =>
    paths(Reflect.getMetadata(PATH_METADATA, handler)).map((path) =>
      ['/v1', base, path]
        .filter((part) => part && part !== '/')
        .join('/')
        .replace(/\/+/g, '/'),
    ),
  );
  return `${method} ${urls.join(', ')}`;
}

function routeHandlers(controller: Type): [string, object][] {
  return new MetadataScanner()
    .getAllMethodNames(controller.prototype)
    .map((name): [string, object] => [name, controller.prototype[name]])
    .filter(([, handler]) => Reflect.hasMetadata(METHOD_METADATA, handler));
}

describe('metering declarations', () => {
  const { controllers, classes } = edgeModule();
  const reaching = controllers
    .map((controller) => ({ controller, relays: [...new Set(relaysReachedBy(controller, classes))] }))
    .filter(({ relays }) => relays.length > 0);

  // Guards against the check passing vacuously (no constructor metadata, no relay found).
  it('finds the controllers that send billable work through a metered relay', () => {
    expect(reaching.map(({ controller }) => controller)).toContain(TextGenerationController);
  });

  it('every route of a controller that reaches a metered relay declares @Metered (or says why it is @Unmetered)', () => {
    const undeclared = reaching.flatMap(({ controller, relays }) =>
      routeHandlers(controller)
        .filter(([, handler]) => !Reflect.hasMetadata(METERED_ROUTE, handler) && !Reflect.hasMetadata(UNMETERED_ROUTE, handler))
        .map(([name, handler]) => `${routeOf(controller, handler)} (${controller.name}.${name}, reaches ${relays.map((relay) => relay.name).join(', ')})`),
    );
    expect(undeclared).toEqual([]);
  });

  it('no route is both @Metered and @Unmetered', () => {
    const both = controllers.flatMap((controller) =>
      routeHandlers(controller)
        .filter(([, handler]) => Reflect.hasMetadata(METERED_ROUTE, handler) && Reflect.hasMetadata(UNMETERED_ROUTE, handler))
        .map(([, handler]) => routeOf(controller, handler)),
    );
    expect(both).toEqual([]);
  });

  // A relay that claims (and settles or releases) reserved credits but lacks the marker would hide
  // its routes from the check above. The rate-limit guard reserves, for every route, what the
  // route's @Metered estimator says: it is the check's subject, not a relay.
  it('every provider that uses the budget is marked @MeteredRelay', () => {
    const unmarked = [...new Set(classes.values())]
      .filter((type) => type !== AdmissionGuard && dependenciesOf(type, classes).includes(BudgetService))
      .filter((type) => !Reflect.getMetadata(METERED_RELAY, type))
      .map((type) => type.name);
    expect(unmarked).toEqual([]);
  });
});
