"""The skimmed sketch (:mod:`.skimmed`): a hash sketch whose dense keys are found (:mod:`.skimdense`,
:mod:`.hierarchy`, :mod:`.virtual`) and counted apart."""
