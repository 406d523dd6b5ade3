"""Exceptions that tell the user's mistakes apart from failures inside the user's own code."""

from __future__ import annotations


class MechanismError(RuntimeError):
    """An exception raised inside a mechanism's own code (a plug-in, or a feature map the user gave).

    The original exception is its `__cause__`, with its traceback (file and line in the user's
    code); `where` says in which phase and call it happened. Argument mistakes are ValueError /
    TypeError instead and are reported in one line.
    """

    def __init__(self, where: str, cause: BaseException) -> None:
        super().__init__(f"{where}: {type(cause).__name__}: {cause}")
        self.where = where
        self.__cause__ = cause

    # picklable, so that parallel workers can send it back
    def __reduce__(self) -> tuple[type[MechanismError], tuple[str, BaseException | None]]:
        return type(self), (self.where, self.__cause__)
