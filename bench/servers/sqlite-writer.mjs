// Another process writing to the service's SQLite file, as a `svc worker` delivering webhooks or a
// `svc` command does: commits one row to a table of its own SQLITE_WRITER_RATE times a second (none of
// the tables a credential cache depends on). Prints "writing" once its first commit is in. Plain
// JavaScript, like the other stand-ins of the benchmark.
import { DatabaseSync } from 'node:sqlite';

const database = new DatabaseSync(process.env.SQLITE_WRITER_FILE, { timeout: 5000 });
database.exec('create table if not exists bench_writer (id integer primary key, written_at text not null)');
const insert = database.prepare('insert into bench_writer (written_at) values (?)');
const commit = () => insert.run(new Date().toISOString());
commit();
process.stdout.write('writing\n');
setInterval(commit, 1000 / Number(process.env.SQLITE_WRITER_RATE ?? 100));
process.on('SIGTERM', () => {
  database.close();
  process.exit(0);
});
