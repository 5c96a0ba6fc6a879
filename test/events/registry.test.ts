// The event registry is what the event catalog publishes and what emit() is typed by: every entry
// must describe itself, and its example must be a `data` its own schema accepts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import formats from 'ajv-formats';
import { EVENT_NAMES, EVENT_TYPES, isEventType } from '../../src/events/index.ts';

// The formats (email, uuid, date-time) checked as the API's own validators check them.
const ajv = formats.default(new Ajv({ strict: false, allErrors: true }));

describe('event registry', () => {
  it('names every event resource.sub_resource.action, in lowercase', () => {
    assert.ok(EVENT_NAMES.length >= 3);
    for (const name of EVENT_NAMES) assert.match(name, /^[a-z]+(_[a-z]+)*(\.[a-z]+(_[a-z]+)*){1,2}$/, name);
  });

  it('gives each event a group, a description and a deprecation flag', () => {
    for (const [name, definition] of Object.entries(EVENT_TYPES)) {
      assert.ok(definition.group.length > 0, `${name}: group`);
      assert.ok(definition.description.length > 0, `${name}: description`);
      assert.equal(typeof definition.deprecated, 'boolean', `${name}: deprecated`);
    }
  });

  it('has an example that its own data schema accepts, and a schema that refuses a wrong one', () => {
    for (const [name, definition] of Object.entries(EVENT_TYPES)) {
      const valid = ajv.compile(definition.data);
      assert.ok(valid(definition.example), `${name}: ${ajv.errorsText(valid.errors)}`);
      assert.equal(valid({}), false, `${name}: an empty data passes`);
      assert.equal(
        valid({ ...definition.example, email: 'not an address', user_id: 'one' }),
        false,
        `${name}: a mistyped data passes`,
      );
    }
  });

  it('knows its own names and no others', () => {
    for (const name of EVENT_NAMES) assert.equal(isEventType(name), true);
    for (const name of ['team.member', 'toString', '*', 'team.member.added '])
      assert.equal(isEventType(name), false, name);
  });
});
