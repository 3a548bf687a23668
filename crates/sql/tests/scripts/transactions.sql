# Transactions: rollback, statement rollback, snapshot isolation between two sessions,
# BEGIN inside a transaction, optimistic write conflicts.
> CREATE DATABASE tx
ok 1
> USE tx
ok 0
> CREATE TABLE acc (id INT PRIMARY KEY, bal INT NOT NULL)
ok 0
> INSERT INTO acc VALUES (1, 100), (2, 100)
ok 2
> BEGIN
ok 0
> UPDATE acc SET bal = bal - 10 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> INSERT INTO acc VALUES (2, 0)
error 1062 (23000): Duplicate entry '2' for key 'acc.PRIMARY'
> SELECT * FROM acc ORDER BY id
id	bal
1	90
2	100
> ROLLBACK
ok 0
> SELECT * FROM acc ORDER BY id
id	bal
1	100
2	100
# A snapshot does not see a later commit of another session.
> BEGIN
ok 0
> SELECT bal FROM acc WHERE id = 1
bal
100
@session b
> USE tx
ok 0
> UPDATE acc SET bal = 50 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
@session a
> SELECT bal FROM acc WHERE id = 1
bal
100
> COMMIT
ok 0
> SELECT bal FROM acc WHERE id = 1
bal
50
# BEGIN commits an open transaction (sysbench relies on it).
> BEGIN
ok 0
> UPDATE acc SET bal = 60 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> BEGIN
ok 0
> ROLLBACK
ok 0
> SELECT bal FROM acc WHERE id = 1
bal
60
# A pessimistic UPDATE writes the newest row even when its snapshot is older.
> BEGIN
ok 0
> SELECT bal FROM acc WHERE id = 2
bal
100
@session b
> UPDATE acc SET bal = bal + 1 WHERE id = 2
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
@session a
> UPDATE acc SET bal = bal + 1 WHERE id = 2
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SELECT bal FROM acc WHERE id = 2
bal
102
> COMMIT
ok 0
> SELECT bal FROM acc WHERE id = 2
bal
102
# Optimistic mode detects the conflict at COMMIT instead.
> SET tidb_txn_mode = 'optimistic'
ok 0
> BEGIN
ok 0
> UPDATE acc SET bal = 0 WHERE id = 2
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
@session b
> UPDATE acc SET bal = 7 WHERE id = 2
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
@session a
> COMMIT
error 9007 (HY000): Write conflict, txnStartTS=<ts>, conflictCommitTS=<ts> [try again later]
> SELECT bal FROM acc WHERE id = 2
bal
7
> SET tidb_txn_mode = 'pessimistic'
ok 0
# A row lock held by another session times out with 1205 and leaves both sessions usable.
> BEGIN
ok 0
> SELECT * FROM acc WHERE id = 1 FOR UPDATE
id	bal
1	60
@session b
> SET innodb_lock_wait_timeout = 1
ok 0
> UPDATE acc SET bal = 1 WHERE id = 1
error 1205 (HY000): Lock wait timeout exceeded; try restarting transaction
> SELECT @@autocommit, @@tx_isolation, @@innodb_lock_wait_timeout
@@autocommit	@@tx_isolation	@@innodb_lock_wait_timeout
1	REPEATABLE-READ	1
@session a
> UPDATE acc SET bal = 61 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> COMMIT
ok 0
@session b
> SELECT bal FROM acc WHERE id = 1
bal
61
# A row looked up by its key FOR UPDATE is locked even when it is missing: another session
# cannot insert it until the locking transaction ends, so a second read finds it still missing.
@session a
> BEGIN
ok 0
> SELECT * FROM acc WHERE id = 40 FOR UPDATE
id	bal
> SELECT * FROM acc WHERE id IN (41, 42) FOR UPDATE
id	bal
@session b
> INSERT INTO acc VALUES (40, 1)
error 1205 (HY000): Lock wait timeout exceeded; try restarting transaction
> INSERT INTO acc VALUES (42, 1) ON DUPLICATE KEY UPDATE bal = bal + 1
error 1205 (HY000): Lock wait timeout exceeded; try restarting transaction
@session a
> SELECT * FROM acc WHERE id = 40 FOR UPDATE
id	bal
> INSERT INTO acc VALUES (40, 2)
ok 1
> COMMIT
ok 0
@session b
> DELETE FROM acc WHERE id = 40
ok 1
# Rows locked but not written are still read (batch point get), and an empty range reads nothing.
> BEGIN
ok 0
> SELECT * FROM acc WHERE id = 1 FOR UPDATE
id	bal
1	61
> SELECT * FROM acc WHERE id IN (1, 2) ORDER BY id
id	bal
1	61
2	7
> UPDATE acc SET bal = bal WHERE id IN (1, 2)
ok 0 (Rows matched: 2  Changed: 0  Warnings: 0)
> SELECT * FROM acc WHERE id > 10 AND id < 5
id	bal
> SELECT * FROM acc WHERE id BETWEEN 2 AND 1
id	bal
> ROLLBACK
ok 0
# SAVEPOINT, ROLLBACK TO SAVEPOINT, RELEASE SAVEPOINT (Django's and Rails' nested blocks).
> CREATE TABLE sp (id INT PRIMARY KEY, v INT)
ok 0
> BEGIN
ok 0
> INSERT INTO sp VALUES (1, 10)
ok 1
> SAVEPOINT a
ok 0
> INSERT INTO sp VALUES (2, 20)
ok 1
> UPDATE sp SET v = 11 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SAVEPOINT b
ok 0
> DELETE FROM sp WHERE id = 1
ok 1
> SELECT * FROM sp ORDER BY id
id	v
2	20
> ROLLBACK TO SAVEPOINT b
ok 0
> SELECT * FROM sp ORDER BY id
id	v
1	11
2	20
> ROLLBACK TO a
ok 0
> SELECT * FROM sp ORDER BY id
id	v
1	10
> ROLLBACK TO b
error 1305 (42000): SAVEPOINT b does not exist
> INSERT INTO sp VALUES (3, 30)
ok 1
> SAVEPOINT c
ok 0
> RELEASE SAVEPOINT c
ok 0
> RELEASE SAVEPOINT c
error 1305 (42000): SAVEPOINT c does not exist
> SAVEPOINT a
ok 0
> INSERT INTO sp VALUES (4, 40)
ok 1
> ROLLBACK WORK TO SAVEPOINT a
ok 0
> COMMIT
ok 0
> SELECT * FROM sp ORDER BY id
id	v
1	10
3	30
> ROLLBACK TO a
error 1305 (42000): SAVEPOINT a does not exist
> SAVEPOINT outside
ok 0
> RELEASE SAVEPOINT outside
error 1305 (42000): SAVEPOINT outside does not exist
# A savepoint with a name already set moves to now.
> BEGIN
ok 0
> SAVEPOINT x
ok 0
> INSERT INTO sp VALUES (5, 50)
ok 1
> SAVEPOINT X
ok 0
> INSERT INTO sp VALUES (6, 60)
ok 1
> ROLLBACK TO x
ok 0
> COMMIT
ok 0
> SELECT id FROM sp WHERE id > 4 ORDER BY id
id
5
# The same in an optimistic transaction.
> SET tidb_txn_mode = 'optimistic'
ok 0
> BEGIN
ok 0
> UPDATE sp SET v = v + 1 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> SAVEPOINT s
ok 0
> UPDATE sp SET v = v + 100 WHERE id = 1
ok 1 (Rows matched: 1  Changed: 1  Warnings: 0)
> INSERT INTO sp VALUES (7, 70)
ok 1
> ROLLBACK TO s
ok 0
> COMMIT
ok 0
> SELECT * FROM sp WHERE id IN (1, 7)
id	v
1	11
> SET tidb_txn_mode = 'pessimistic'
ok 0
# TiDB's BEGIN PESSIMISTIC / BEGIN OPTIMISTIC choose the mode of one transaction, whatever
# tidb_txn_mode says: an optimistic one leaves a duplicate key to its commit, a pessimistic
# one finds it at the INSERT.
> CREATE DATABASE bm
ok 1
> CREATE TABLE bm.t (id INT PRIMARY KEY, v INT)
ok 0
> INSERT INTO bm.t VALUES (1, 0)
ok 1
> SET tidb_txn_mode = 'pessimistic'
ok 0
> BEGIN OPTIMISTIC
ok 0
> INSERT INTO bm.t VALUES (1, 5)
ok 1
> COMMIT
error 1062 (23000): Duplicate entry '1' for key 't.PRIMARY'
> SET tidb_txn_mode = 'optimistic'
ok 0
> BEGIN PESSIMISTIC
ok 0
> INSERT INTO bm.t VALUES (1, 5)
error 1062 (23000): Duplicate entry '1' for key 't.PRIMARY'
> COMMIT
ok 0
> BEGIN PESSIMISTIC WORK
error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'PESSIMISTIC WORK' at line 1
> BEGIN OPTIMISTIC; INSERT INTO bm.t VALUES (1, 6)
ok 0
ok 1
> COMMIT
error 1062 (23000): Duplicate entry '1' for key 't.PRIMARY'
> SELECT * FROM bm.t
id	v
1	0
> SET tidb_txn_mode = 'pessimistic'
ok 0
> DROP DATABASE bm
ok 0
