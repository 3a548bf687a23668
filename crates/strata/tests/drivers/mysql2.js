// Node's mysql2 driver against Strata with its default options (multiple statements turned on
// for the one check that needs them).
//
// Usage: node mysql2.js PORT MODULE_DIR. Connects over TCP to 127.0.0.1 and to localhost; runs
// DDL, text and prepared statements with every column type, NULLs, a large value,
// transactions, errors, a change of user, multiple result sets and metadata. Prints "ok" at the end; a failed
// check exits non-zero.
'use strict';

const assert = require('assert');
const path = require('path');

const port = Number(process.argv[2]);
const mysql = require(path.join(process.argv[3], 'node_modules', 'mysql2', 'promise'));

const CREATE = `CREATE TABLE every_type (
    id INT PRIMARY KEY,
    ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT, ubi BIGINT UNSIGNED,
    de DECIMAL(20,6), fl FLOAT, db DOUBLE,
    ch CHAR(10), vc VARCHAR(100) NOT NULL DEFAULT '', tx TEXT, bl BLOB, vb VARBINARY(100),
    d DATE, dt DATETIME(6), ts TIMESTAMP NULL, tm TIME, y YEAR,
    bt BIT(8), j JSON, e ENUM('small','large'), st SET('x','y','z'))`;
const COLUMNS = 'ti, si, mi, i, bi, ubi, de, fl, db, ch, vc, tx, bl, vb, d, dt, ts, tm, y, bt, j, e, st';
const LITERALS = "-128, -32768, -8388608, -2147483648, -9223372036854775808, 18446744073709551615, " +
  "-12345678901234.123456, 1.5, -2.25, 'fixed', 'variable ü', 'some text', X'00FF10', " +
  "X'BEEF', '2024-02-29', '2024-02-29 13:14:15.123456', '2001-02-03 04:05:06', " +
  "'-838:59:59', 2155, b'01011010', '{\"a\": [1, 2]}', 'large', 'x,z'";
const PARAMETERS = [
  -128, -32768, -8388608, -2147483648, '-9223372036854775808', '18446744073709551615',
  '-12345678901234.123456', 1.5, -2.25, 'fixed', 'variable ü', 'some text',
  Buffer.from([0x00, 0xff, 0x10]), Buffer.from([0xbe, 0xef]), '2024-02-29',
  '2024-02-29 13:14:15.123456', '2001-02-03 04:05:06', '-838:59:59', 2155, Buffer.from([0x5a]),
  '{"a": [1, 2]}', 'large', 'x,z',
];

async function expectError(conn, sql, code, state) {
  try {
    await conn.query(sql);
  } catch (e) {
    assert.deepStrictEqual([e.errno, e.sqlState], [code, state], sql);
    return;
  }
  assert.fail(`${sql} did not fail`);
}

async function session(host, db) {
  const conn = await mysql.createConnection({ host, port, user: 'root', password: '' });
  const [[server]] = await conn.query('SELECT @@version AS v, CURRENT_USER() AS u, DATABASE() AS d');
  assert.ok(server.v.includes('Strata'), server.v);
  assert.ok(server.u.startsWith('root@'), server.u);
  assert.strictEqual(server.d, null);
  await conn.query(`DROP DATABASE IF EXISTS ${db}`);
  await conn.query(`CREATE DATABASE ${db}`);
  await conn.query(`USE ${db}`);
  await conn.query(CREATE);

  // The same row in by text and by a prepared statement; defaults in a third.
  await conn.query(`INSERT INTO every_type (id, ${COLUMNS}) VALUES (1, ${LITERALS})`);
  const marks = PARAMETERS.map(() => '?').join(', ');
  const [inserted] = await conn.execute(
    `INSERT INTO every_type (id, ${COLUMNS}) VALUES (?, ${marks})`, [2, ...PARAMETERS]);
  assert.strictEqual(inserted.affectedRows, 1);
  await conn.query('INSERT INTO every_type (id) VALUES (3)');

  const [[textRow], fields] = await conn.query(`SELECT ${COLUMNS} FROM every_type WHERE id = 1`);
  const [[binaryRow]] = await conn.execute(`SELECT ${COLUMNS} FROM every_type WHERE id = ?`, [2]);
  assert.deepStrictEqual(fields.map((f) => f.name), COLUMNS.split(', '));
  for (const name of COLUMNS.split(', ')) {
    assert.deepStrictEqual(binaryRow[name], textRow[name], `${name} by text and prepared`);
  }
  // Exact values where a JavaScript number cannot hold them: as text.
  const [[exact]] = await conn.query(
    'SELECT CAST(bi AS CHAR) AS bi, CAST(ubi AS CHAR) AS ubi, CAST(tm AS CHAR) AS tm FROM every_type WHERE id = 2');
  assert.deepStrictEqual(exact, { bi: '-9223372036854775808', ubi: '18446744073709551615', tm: '-838:59:59' });
  assert.strictEqual(textRow.de, '-12345678901234.123456');
  assert.strictEqual(textRow.vc, 'variable ü');
  assert.deepStrictEqual(textRow.bl, Buffer.from([0x00, 0xff, 0x10]));
  assert.strictEqual(textRow.y, 2155);
  assert.deepStrictEqual(textRow.j, { a: [1, 2] });
  assert.strictEqual(textRow.e, 'large');
  const types = Object.fromEntries(fields.map((f) => [f.name, f.columnType]));
  assert.deepStrictEqual([types.bi, types.de, types.dt, types.j], [8, 246, 12, 245]);

  const [[defaults]] = await conn.query(`SELECT ${COLUMNS} FROM every_type WHERE id = 3`);
  assert.strictEqual(defaults.vc, '');
  delete defaults.vc;
  assert.deepStrictEqual(Object.values(defaults).filter((v) => v !== null), [], 'NULLs');

  // A large value both ways.
  await conn.query('ALTER TABLE every_type ADD COLUMN big LONGBLOB');
  const big = Buffer.alloc(1 << 20, 0).map((_, k) => k % 256);
  await conn.execute('UPDATE every_type SET big = ? WHERE id = 3', [big]);
  const [[read]] = await conn.execute('SELECT big, LENGTH(big) AS n FROM every_type WHERE id = ?', [3]);
  assert.strictEqual(read.n, big.length);
  assert.ok(read.big.equals(big), '1 MiB LONGBLOB');
  await expectError(conn, `UPDATE every_type SET bl = REPEAT('x', 70000) WHERE id = 3`, 1406, '22001');

  // Transactions: a rolled-back change is gone, a committed one stays.
  await conn.beginTransaction();
  await conn.execute('UPDATE every_type SET vc = ? WHERE id = ?', ['rolled back', 1]);
  await conn.rollback();
  await conn.beginTransaction();
  await conn.execute('UPDATE every_type SET vc = ? WHERE id = ?', ['committed', 2]);
  await conn.commit();
  const [vcs] = await conn.query('SELECT vc FROM every_type ORDER BY id');
  assert.deepStrictEqual(vcs.map((r) => r.vc), ['variable ü', 'committed', '']);

  // Errors carry MySQL's code and SQLSTATE, and the connection goes on.
  await expectError(conn, 'SELECT nope FROM every_type', 1054, '42S22');
  await expectError(conn, 'INSERT INTO every_type (id) VALUES (1)', 1062, '23000');
  await expectError(conn, 'SELEKT 1', 1064, '42000');
  const [[count]] = await conn.query('SELECT COUNT(*) AS n FROM every_type');
  assert.strictEqual(count.n, 3);
  // Without multipleStatements (the default) two statements are refused, as by MySQL.
  await expectError(conn, 'SELECT 1; SELECT 2', 1064, '42000');

  // changeUser (COM_CHANGE_USER, as pools use it): another account in the same connection,
  // with its own privileges, and back.
  await conn.query(`CREATE USER '${db}'@'%' IDENTIFIED BY 'pw-${db}'`);
  await conn.query(`GRANT SELECT ON ${db}.* TO '${db}'@'%'`);
  await conn.query("SET @left = 'behind'");
  await conn.changeUser({ user: db, password: `pw-${db}`, database: db });
  const [[changed]] = await conn.query('SELECT CURRENT_USER() AS u, DATABASE() AS d, @left AS l');
  assert.deepStrictEqual({ ...changed }, { u: `${db}@%`, d: db, l: null });
  const [[seen]] = await conn.query('SELECT COUNT(*) AS n FROM every_type');
  assert.strictEqual(seen.n, 3);
  await expectError(conn, 'DELETE FROM every_type', 1142, '42000');
  await conn.end();
  // (mysql2 cannot change back to root: an empty password makes it resend the last one.)
  const root = await mysql.createConnection({ host, port, user: 'root', password: '' });
  await root.query(`DROP USER '${db}'@'%'`);
  await root.query(`DROP DATABASE ${db}`);
  await root.end();

  // Several result sets from one call, where the client asks for them.
  const multi = await mysql.createConnection({ host, port, user: 'root', password: '', multipleStatements: true });
  const [sets] = await multi.query("SELECT 1 AS a; SELECT 'two' AS b, 3 AS c");
  assert.deepStrictEqual(JSON.parse(JSON.stringify(sets)), [[{ a: 1 }], [{ b: 'two', c: 3 }]]);
  await multi.end();
}

(async () => {
  await session('127.0.0.1', 'mysql2_0');
  await session('localhost', 'mysql2_1');
  console.log('ok');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
