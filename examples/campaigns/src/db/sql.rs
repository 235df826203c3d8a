//! The service's statements as either database runs them: written once, in PostgreSQL's
//! style (`$1` parameters, `NOW_MS` for the database's clock in milliseconds since 1970,
//! `GREATEST` and `LEAST` of their arguments), with their parameters ([`Arg`]) and rows
//! ([`Row`]).

use std::time::Duration;

use crate::db::error::DbError;

/// A statement's parameter.
#[derive(Clone, Debug)]
pub enum Arg {
    /// An integer, or NULL.
    Int(Option<i64>),
    /// A text, or NULL.
    Text(Option<String>),
    /// A boolean (an integer, 0 or 1, on SQLite).
    Bool(bool),
}

impl From<bool> for Arg {
    fn from(b: bool) -> Self {
        Arg::Bool(b)
    }
}

impl From<i64> for Arg {
    fn from(n: i64) -> Self {
        Arg::Int(Some(n))
    }
}

impl From<Option<i64>> for Arg {
    fn from(n: Option<i64>) -> Self {
        Arg::Int(n)
    }
}

impl From<&str> for Arg {
    fn from(text: &str) -> Self {
        Arg::Text(Some(text.to_owned()))
    }
}

impl From<Option<&str>> for Arg {
    fn from(text: Option<&str>) -> Self {
        Arg::Text(text.map(str::to_owned))
    }
}

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Arg::Int(n) => n.to_sql(),
            Arg::Text(text) => text.to_sql(),
            Arg::Bool(b) => b.to_sql(),
        }
    }
}

impl tokio_postgres::types::ToSql for Arg {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use tokio_postgres::types::Type;
        match self {
            Arg::Int(n) if *ty == Type::INT4 => n.map(i32::try_from).transpose()?.to_sql(ty, out),
            Arg::Int(n) => n.to_sql(ty, out),
            Arg::Text(text) => text.to_sql(ty, out),
            Arg::Bool(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(ty: &tokio_postgres::types::Type) -> bool {
        use tokio_postgres::types::Type;
        [
            Type::INT8,
            Type::INT4,
            Type::TEXT,
            Type::VARCHAR,
            Type::BOOL,
        ]
        .contains(ty)
    }

    tokio_postgres::types::to_sql_checked!();
}

/// A column's value in a [`Row`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Null,
    Int(i64),
    Text(String),
}

/// A result row.
#[derive(Clone, Debug)]
pub struct Row(Vec<Value>);

impl Row {
    /// Column `i`, an integer or NULL.
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match &self.0[i] {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// Column `i`, an integer (NULL is 0).
    pub fn int(&self, i: usize) -> i64 {
        self.opt_int(i).unwrap_or(0)
    }

    /// Column `i`, a text or NULL.
    pub fn opt_text(&self, i: usize) -> Option<String> {
        match &self.0[i] {
            Value::Text(text) => Some(text.clone()),
            _ => None,
        }
    }

    /// Column `i`, a text (NULL is empty).
    pub fn text(&self, i: usize) -> String {
        self.opt_text(i).unwrap_or_default()
    }
}

/// SQLite's clock in milliseconds.
const SQLITE_NOW: &str = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
/// PostgreSQL's clock in milliseconds.
pub(crate) const POSTGRES_NOW: &str =
    "CAST(extract(epoch FROM clock_timestamp()) * 1000 AS bigint)";

/// Runs SQLite's `work` (a statement, which may wait for the file's lock) off the async
/// executor: on a multi-threaded runtime its worker first hands its other tasks to another
/// thread (`block_in_place`), so no task waits behind the file; on a single-threaded one (a
/// unit test's) there is no other worker, and it runs in place.
pub(crate) fn off_executor<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

pub(crate) fn sqlite_execute(
    connection: &rusqlite::Connection,
    sql: &str,
    args: &[Arg],
) -> Result<u64, DbError> {
    off_executor(|| {
        let changed = connection
            .prepare_cached(&sqlite_sql(sql))?
            .execute(rusqlite::params_from_iter(args))?;
        Ok(changed as u64)
    })
}

pub(crate) fn sqlite_query(
    connection: &rusqlite::Connection,
    sql: &str,
    args: &[Arg],
) -> Result<Vec<Row>, DbError> {
    off_executor(|| sqlite_rows(connection, sql, args))
}

fn sqlite_rows(
    connection: &rusqlite::Connection,
    sql: &str,
    args: &[Arg],
) -> Result<Vec<Row>, DbError> {
    let mut statement = connection.prepare_cached(&sqlite_sql(sql))?;
    let width = statement.column_count();
    let rows = statement.query_map(rusqlite::params_from_iter(args), |row| {
        (0..width)
            .map(|i| {
                Ok(match row.get_ref(i)? {
                    rusqlite::types::ValueRef::Integer(n) => Value::Int(n),
                    rusqlite::types::ValueRef::Text(text) => {
                        Value::Text(String::from_utf8_lossy(text).into_owned())
                    }
                    _ => Value::Null,
                })
            })
            .collect::<rusqlite::Result<Vec<_>>>()
            .map(Row)
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A statement on PostgreSQL, its parameters typed in it: one round trip, no prepared
/// statement kept on the connection (a pooler in transaction mode keeps none).
pub(crate) async fn pg_execute(
    client: &tokio_postgres::Client,
    sql: &str,
    args: &[Arg],
) -> Result<u64, tokio_postgres::Error> {
    let sql = sql.replace("NOW_MS", POSTGRES_NOW);
    client.execute_typed(&sql, &postgres_params(args)).await
}

pub(crate) async fn pg_query(
    client: &tokio_postgres::Client,
    sql: &str,
    args: &[Arg],
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let sql = sql.replace("NOW_MS", POSTGRES_NOW);
    let rows = client.query_typed(&sql, &postgres_params(args)).await?;
    Ok(rows.iter().map(postgres_row).collect())
}

/// A PostgreSQL row as the service reads it.
fn postgres_row(row: &tokio_postgres::Row) -> Row {
    use tokio_postgres::types::Type;
    Row((0..row.len())
        .map(|i| match row.columns()[i].type_() {
            ty if *ty == Type::INT8 => row.get::<_, Option<i64>>(i).map_or(Value::Null, Value::Int),
            ty if *ty == Type::INT4 => row
                .get::<_, Option<i32>>(i)
                .map_or(Value::Null, |n| Value::Int(n.into())),
            // Text, or nothing the service reads (`void`, say).
            _ => row
                .try_get::<_, Option<String>>(i)
                .ok()
                .flatten()
                .map_or(Value::Null, Value::Text),
        })
        .collect())
}

/// The parameters as `tokio-postgres` takes them, each with its type, so that a statement
/// needs no separate prepare.
pub(crate) fn postgres_params(
    args: &[Arg],
) -> Vec<(
    &(dyn tokio_postgres::types::ToSql + Sync),
    tokio_postgres::types::Type,
)> {
    use tokio_postgres::types::Type;
    args.iter()
        .map(|arg| {
            let ty = match arg {
                Arg::Int(_) => Type::INT8,
                Arg::Text(_) => Type::TEXT,
                Arg::Bool(_) => Type::BOOL,
            };
            (arg as &(dyn tokio_postgres::types::ToSql + Sync), ty)
        })
        .collect()
}

/// A statement in SQLite's dialect: `?N` parameters, its clock, and its `MAX` and `MIN` of
/// several arguments for `GREATEST` and `LEAST`.
pub(crate) fn sqlite_sql(sql: &str) -> String {
    let sql = sql.replace('$', "?").replace("NOW_MS", SQLITE_NOW);
    if sql.contains("GREATEST(") || sql.contains("LEAST(") {
        return sql.replace("GREATEST(", "MAX(").replace("LEAST(", "MIN(");
    }
    sql
}

/// `work` within `timeout`.
pub(crate) async fn bounded<T, E: Into<DbError>>(
    timeout: Duration,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, DbError> {
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| DbError::TimedOut(timeout))?
        .map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement written once runs as written on SQLite: its parameters, and the larger and
    /// smaller of several values, as PostgreSQL's `GREATEST` and `LEAST` give them.
    #[test]
    fn greatest_and_least_are_sqlites_max_and_min() {
        let connection = rusqlite::Connection::open_in_memory().unwrap();
        let sql = "SELECT GREATEST($1 - 5, 0), LEAST($1, 3, $2), GREATEST(LEAST($1, 9), $2)";
        let rows = sqlite_query(&connection, sql, &[4.into(), 7.into()]).unwrap();
        assert_eq!((rows[0].int(0), rows[0].int(1), rows[0].int(2)), (0, 3, 7));
    }
}
