"""SQLAlchemy 2 (ORM and Core, over PyMySQL) and an Alembic migration against Strata.

Usage: sqlalchemy_orm.py PORT MODULE_DIR. Creates a schema from models (a foreign key, unique
and plain indexes, every common column type), runs ORM sessions with relationships (insert,
query with joins and eager loads, update, delete, rollback), reflects the tables back, and
applies a migration with Alembic's operations (add, alter and drop a column, create and drop
an index). Prints "ok" at the end; any failed check raises.
"""

import datetime
import decimal
import sys

port = int(sys.argv[1])
sys.path.insert(0, sys.argv[2])

import pymysql  # noqa: E402
from alembic.migration import MigrationContext  # noqa: E402
from alembic.operations import Operations  # noqa: E402
from sqlalchemy import (  # noqa: E402
    JSON, Boolean, Column, Date, DateTime, ForeignKey, Index, Integer, LargeBinary, Numeric,
    String, Text, create_engine, func, inspect, select, text,
)
from sqlalchemy.orm import (  # noqa: E402
    DeclarativeBase, Mapped, Session, mapped_column, relationship, selectinload,
)

DB = "orm_test"


def expect(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(50), unique=True)
    born = Column(Date)
    active = Column(Boolean, default=True, nullable=False)
    books: Mapped[list["Book"]] = relationship(
        back_populates="author", cascade="all, delete-orphan", order_by="Book.id"
    )


class Book(Base):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    title: Mapped[str] = mapped_column(String(200))
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"))
    price = Column(Numeric(8, 2))
    published = Column(DateTime)
    summary = Column(Text)
    cover = Column(LargeBinary)
    extra = Column(JSON)
    author: Mapped[Author] = relationship(back_populates="books")
    __table_args__ = (Index("ix_books_title_price", "title", "price"),)


raw = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
raw.cursor().execute(f"DROP DATABASE IF EXISTS {DB}")
raw.cursor().execute(f"CREATE DATABASE {DB}")

engine = create_engine(f"mysql+pymysql://root@127.0.0.1:{port}/{DB}")
Base.metadata.create_all(engine)
Base.metadata.create_all(engine)  # a second time: the tables are seen and left alone

with Session(engine) as session:
    tolkien = Author(name="Tolkien", born=datetime.date(1892, 1, 3))
    tolkien.books = [
        Book(title="The Hobbit", price=decimal.Decimal("12.50"),
             published=datetime.datetime(1937, 9, 21, 10, 0), summary="There and back again",
             cover=bytes(range(256)), extra={"pages": 310, "tags": ["fantasy"]}),
        Book(title="The Silmarillion", price=decimal.Decimal("20.00")),
    ]
    session.add_all([tolkien, Author(name="Le Guin", active=False)])
    session.commit()
    expect(tolkien.id is not None and tolkien.books[0].id is not None, True, "generated ids")

with Session(engine) as session:
    authors = session.scalars(select(Author).options(selectinload(Author.books)).order_by(Author.name)).all()
    expect([(a.name, len(a.books), a.active) for a in authors],
           [("Le Guin", 0, False), ("Tolkien", 2, True)], "eager load")
    hobbit = session.scalars(select(Book).join(Book.author).where(Author.name == "Tolkien", Book.price < 15)).one()
    expect((hobbit.title, hobbit.author.born), ("The Hobbit", datetime.date(1892, 1, 3)), "join")
    expect(hobbit.cover, bytes(range(256)), "LargeBinary")
    expect(hobbit.extra, {"pages": 310, "tags": ["fantasy"]}, "JSON")
    expect(hobbit.published, datetime.datetime(1937, 9, 21, 10, 0), "DateTime")
    counts = session.execute(
        select(Author.name, func.count(Book.id)).outerjoin(Book).group_by(Author.name).order_by(Author.name)
    ).all()
    expect([tuple(r) for r in counts], [("Le Guin", 0), ("Tolkien", 2)], "outer join count")
    hobbit.price = decimal.Decimal("13.75")
    session.commit()
    expect(session.scalar(select(Book.price).where(Book.id == hobbit.id)), decimal.Decimal("13.75"), "update")

    # A failed flush rolls the session back: a second "Tolkien" breaks the unique key.
    session.add(Author(name="Tolkien"))
    try:
        session.commit()
        raise AssertionError("a duplicate name was committed")
    except Exception as e:  # IntegrityError
        expect(type(e).__name__, "IntegrityError", "duplicate")
        expect(e.orig.args[0], 1062, "duplicate code")
        session.rollback()

    # Deleting an author deletes its books (the ORM's cascade).
    session.delete(session.scalars(select(Author).where(Author.name == "Tolkien")).one())
    session.commit()
    expect(session.scalar(select(func.count()).select_from(Book)), 0, "cascade")

# Reflection reads the tables back as SQLAlchemy's MySQL dialect parses them.
inspector = inspect(engine)
expect(sorted(inspector.get_table_names()), ["authors", "books"], "tables")
columns = {c["name"]: c for c in inspector.get_columns("books")}
expect(sorted(columns), sorted(["id", "title", "author_id", "price", "published", "summary",
                                "cover", "extra"]), "columns")
expect((columns["price"]["type"].precision, columns["price"]["type"].scale), (8, 2), "numeric")
expect(columns["title"]["type"].length, 200, "varchar length")
expect(columns["id"]["autoincrement"], True, "autoincrement")
expect(inspector.get_pk_constraint("books")["constrained_columns"], ["id"], "primary key")
indexes = {i["name"]: i for i in inspector.get_indexes("books")}
expect(indexes["ix_books_title_price"]["column_names"], ["title", "price"], "index")
uniques = inspector.get_unique_constraints("authors") + [
    i for i in inspector.get_indexes("authors") if i.get("unique")]
expect(any(u["column_names"] == ["name"] for u in uniques), True, "unique name")
# (Foreign keys are accepted in CREATE TABLE but not kept: get_foreign_keys finds none.)

# A migration with Alembic's operations.
with engine.begin() as connection:
    op = Operations(MigrationContext.configure(connection))
    op.add_column("books", Column("isbn", String(20), nullable=True))
    op.create_index("ix_books_isbn", "books", ["isbn"], unique=True)
    op.alter_column("books", "title", existing_type=String(200), type_=String(300),
                    existing_nullable=False)
    op.drop_column("books", "summary")
with engine.begin() as connection:
    connection.execute(text("INSERT INTO authors (name, active) VALUES ('Pratchett', 1)"))
    author_id = connection.scalar(text("SELECT id FROM authors WHERE name = 'Pratchett'"))
    connection.execute(text("INSERT INTO books (title, author_id, isbn) VALUES (:t, :a, :i)"),
                       {"t": "x" * 300, "a": author_id, "i": "978-0552"})
inspector = inspect(engine)
columns = {c["name"]: c for c in inspector.get_columns("books")}
expect(("isbn" in columns, "summary" in columns, columns["title"]["type"].length),
       (True, False, 300), "migrated columns")
expect(any(i["name"] == "ix_books_isbn" and i["unique"] for i in inspector.get_indexes("books")),
       True, "migrated index")
with engine.begin() as connection:
    op = Operations(MigrationContext.configure(connection))
    op.drop_index("ix_books_isbn", table_name="books")

engine.dispose()
raw.cursor().execute(f"DROP DATABASE {DB}")
print("ok")
